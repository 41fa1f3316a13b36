import CairnProtocol
import Foundation

extension RemoteAPI {
    /// Removes the client `id` from the project; one the server no longer has (an admin removed it) counts as removed.
    func unregisterClient(_ id: String) async throws {
        _ = try await send(method: "DELETE", path: "/v1/projects/\(project)/clients/\(PercentEncoding.encode(id))", accept: [204, 404])
    }

    /// Sends a diagnostics report (JSON) as the client `id`'s latest.
    func uploadDiagnostics(_ report: Data, clientID id: String) async throws -> DiagnosticsReceipt {
        let response = try await send(method: "PUT", path: "/v1/projects/\(project)/clients/\(PercentEncoding.encode(id))/diagnostics", body: report)
        return try decode(DiagnosticsReceipt.self, response)
    }

    /// `GET /health`, once, without a token: the answer, or the transport's error.
    func health() async throws -> TransportResponse {
        try await transport.send(TransportRequest(method: "GET", url: url("/health"), headers: [], timeout: timeout))
    }
}
