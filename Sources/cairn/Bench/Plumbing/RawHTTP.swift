import Cairn
import Foundation

/// Plain HTTP calls to a Cairn server through the SDK's transport, for measuring the server on its own.
struct RawHTTP {
    let baseURL: URL
    let transport: any HTTPTransport = BenchTransport.sdkDefault.make()

    /// Sends a request with JSON `body`; any status comes back.
    func send(_ method: String, _ path: String, token: String? = nil, body: Data? = nil) async throws -> TransportResponse {
        var headers: [(String, String)] = []
        if let token { headers.append(("Authorization", "Bearer \(token)")) }
        if body != nil { headers.append(("Content-Type", "application/json")) }
        return try await transport.send(
            TransportRequest(method: method, url: URL(string: baseURL.absoluteString + path)!, headers: headers, body: body, timeout: .seconds(120)))
    }

    /// Signs in and returns an access token.
    func login(_ user: String, password: String) async throws -> String {
        let response = try await send("POST", "/v1/auth/login", body: CairnJSON.encode(LoginRequest(username: user, password: password)))
        guard response.status == 200 else { throw CLIError("login answered HTTP \(response.status)") }
        return try CairnJSON.decode(TokenResponse.self, from: response.body).accessToken
    }
}
