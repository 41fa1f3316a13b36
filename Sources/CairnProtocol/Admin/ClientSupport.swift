import Foundation

/// The protocol and release a server speaks, as `GET /health` answers them.
public enum CairnVersion {
    /// The protocol version of PROTOCOL.md (`"1"`); a client checks it before syncing with a server it does not know.
    public static let protocolVersion = "1"
    /// The release of Cairn this build comes from (the server's, in `GET /health`).
    public static let release = "0.1.0"
}

/// The body of `GET /health`: the process answers, which protocol it speaks and which release it runs.
///
/// ```swift
/// let health = try CairnJSON.decode(ServerHealth.self, from: body)
/// if health.protocol != CairnVersion.protocolVersion { /* an incompatible server */ }
/// ```
public struct ServerHealth: Codable, Sendable, Hashable {
    /// `ok`.
    public var status: String
    /// The protocol version (``CairnVersion/protocolVersion``).
    public var `protocol`: String
    /// The server's release (absent from servers older than this field).
    public var version: String?

    /// A health answer with these values.
    public init(status: String = "ok", protocol: String = CairnVersion.protocolVersion, version: String? = CairnVersion.release) {
        self.status = status
        self.protocol = `protocol`
        self.version = version
    }
}

/// The answer to `PUT /v1/projects/{project}/clients/{clientId}/diagnostics`: which client's report the server
/// keeps now, since when, and how large it is.
public struct DiagnosticsReceipt: Codable, Sendable, Hashable {
    /// The client the report belongs to.
    public var clientId: String
    /// When the server received it.
    public var uploadedAt: Date
    /// Its size in bytes, as stored.
    public var bytes: Int

    /// A receipt with these values.
    public init(clientId: String, uploadedAt: Date, bytes: Int) {
        self.clientId = clientId
        self.uploadedAt = uploadedAt
        self.bytes = bytes
    }
}

/// The answer to `GET /v1/projects/{project}/clients/{clientId}/diagnostics`: the latest diagnostics report a client
/// uploaded, with who the client is, for an operator helping without the device in hand.
public struct ClientDiagnostics: Codable, Sendable, Hashable {
    /// The client.
    public var client: ClientSummary
    /// When the report was uploaded.
    public var uploadedAt: Date
    /// The report as the client sent it (the SDK's `Diagnostics`: ids, counts, times and errors, never record data).
    public var report: JSONValue

    /// A stored report of `client`.
    public init(client: ClientSummary, uploadedAt: Date, report: JSONValue) {
        self.client = client
        self.uploadedAt = uploadedAt
        self.report = report
    }
}
