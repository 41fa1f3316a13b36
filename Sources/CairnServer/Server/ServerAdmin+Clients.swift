import CairnProtocol
import Foundation

/// A project's clients for support: one client, removing it (it no longer counts as a device of the project), and
/// the diagnostics report it uploaded, for `cairn admin` and the client routes.
///
/// ```swift
/// let report = try await admin.diagnostics(project: "field", clientID: "c-5e2a9c41")
/// try await admin.removeClient(project: "field", clientID: "c-5e2a9c41")
/// ```
extension ServerAdmin {
    /// The largest diagnostics report the server keeps, in bytes of JSON.
    public static let maximumDiagnosticsBytes = 256 * 1024

    /// The client `clientID` of `project`; `not_found` when the project or the client does not exist.
    public func client(project: String, clientID: String) async throws -> ClientSummary {
        try await checkProject(project)
        guard Names.isValidID(clientID), let client = try await storage.client(id: clientID, project: project) else {
            throw Self.noClient(clientID, project: project)
        }
        return client
    }

    /// Removes a client from `project`, with its diagnostics report: it is no longer listed, holds no tombstones back,
    /// and a device that still sends its id is not counted; `not_found` when there is no such client.
    public func removeClient(project: String, clientID: String) async throws {
        try await checkProject(project)
        guard Names.isValidID(clientID), try await storage.removeClient(id: clientID, project: project) else {
            throw Self.noClient(clientID, project: project)
        }
    }

    /// Keeps `report` (a JSON object, at most ``maximumDiagnosticsBytes``) as the client's latest diagnostics report,
    /// replacing the one before; `not_found` when there is no such client, `validation_failed` for anything but an
    /// object, `payload_too_large` when it is larger.
    @discardableResult
    public func storeDiagnostics(project: String, clientID: String, report: JSONValue) async throws -> DiagnosticsReceipt {
        guard report.objectValue != nil else { throw ErrorBody.validation("a diagnostics report is a JSON object", field: "report") }
        let text = report.jsonText()
        guard text.utf8.count <= Self.maximumDiagnosticsBytes else {
            throw ErrorBody.tooLarge("a diagnostics report holds at most \(Self.maximumDiagnosticsBytes) bytes of JSON")
        }
        let now = clock.now()
        guard Names.isValidID(clientID), try await storage.storeDiagnostics(clientID: clientID, project: project, report: text, now: now) else {
            throw Self.noClient(clientID, project: project)
        }
        return DiagnosticsReceipt(clientId: clientID, uploadedAt: now, bytes: text.utf8.count)
    }

    /// The latest diagnostics report the client uploaded, with the client; `not_found` when there is no such client or
    /// it uploaded none.
    public func diagnostics(project: String, clientID: String) async throws -> ClientDiagnostics {
        let client = try await client(project: project, clientID: clientID)
        guard let stored = try await storage.diagnostics(clientID: clientID, project: project) else {
            throw ErrorBody(code: .notFound, message: "client \"\(clientID)\" of \(project) has uploaded no diagnostics report")
        }
        let report: JSONValue
        do { report = try JSONValue(parsing: stored.report) } catch {
            throw ErrorBody(code: .internalError, message: "the stored diagnostics report of client \"\(clientID)\" is not JSON")
        }
        return ClientDiagnostics(client: client, uploadedAt: stored.uploadedAt, report: report)
    }

    static func noClient(_ clientID: String, project: String) -> ErrorBody {
        ErrorBody(code: .notFound, message: "project \(project) has no client \"\(clientID)\"")
    }
}
