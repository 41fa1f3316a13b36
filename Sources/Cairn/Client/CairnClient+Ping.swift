import CairnProtocol
import Foundation

/// What ``CairnClient/ping()`` learned: whether a Cairn server answers at the configured URL, which protocol and
/// release it runs, and how long the answer took.
///
/// ```swift
/// let ping = await client.ping()
/// if !ping.reachable { print("offline:", ping.problem?.message ?? "") }
/// else if !ping.isCompatible { print("the server speaks protocol", ping.protocolVersion ?? "?") }
/// ```
public struct ServerPing: Sendable, Hashable {
    /// True when a Cairn server answered `GET /health`.
    public var reachable: Bool
    /// The protocol version it speaks (PROTOCOL.md's; ``CairnVersion/protocolVersion`` is this SDK's).
    public var protocolVersion: String?
    /// The server's release, when it says.
    public var serverVersion: String?
    /// From sending the request to reading the answer, when an answer came.
    public var roundTrip: Duration?
    /// Why the server is not reachable: `network_unavailable` or `timed_out` when nothing answered, `bad_response`
    /// when something other than a Cairn server did (a proxy's error page).
    public var problem: ErrorBody?

    /// True when the server speaks this SDK's protocol.
    public var isCompatible: Bool { reachable && protocolVersion == CairnVersion.protocolVersion }

    /// A ping result with these values.
    public init(
        reachable: Bool, protocolVersion: String? = nil, serverVersion: String? = nil, roundTrip: Duration? = nil, problem: ErrorBody? = nil
    ) {
        self.reachable = reachable
        self.protocolVersion = protocolVersion
        self.serverVersion = serverVersion
        self.roundTrip = roundTrip
        self.problem = problem
    }
}

extension CairnClient {
    /// Asks the server whether it answers, once, without signing in and without retrying (SAP's `pingServer`). It never
    /// throws: an unreachable server is an answer (``ServerPing/reachable`` false, with the ``ServerPing/problem``),
    /// so an app can show "offline" or "server too old" without a `catch`. It waits at most
    /// ``CairnConfiguration/requestTimeout`` (a connection that gets no answer: ``CairnConfiguration/connectTimeout``).
    ///
    /// ```swift
    /// let ping = await client.ping()
    /// print(ping.reachable, ping.protocolVersion ?? "-", ping.roundTrip ?? .zero)   // true 1 0.004 seconds
    /// ```
    public func ping() async -> ServerPing {
        let started = ContinuousClock.now
        let response: TransportResponse
        do {
            response = try await api.health()
        } catch {
            let failure = CairnError(wrapping: error)
            return ServerPing(reachable: false, problem: ErrorBody(code: failure.code, message: failure.message))
        }
        let roundTrip = ContinuousClock.now - started
        guard response.status == 200, let health = try? CairnJSON.decode(ServerHealth.self, from: response.body), health.status == "ok" else {
            return ServerPing(
                reachable: false, roundTrip: roundTrip,
                problem: ErrorBody(code: .badResponse, message: "\(api.url("/health")) answered \(response.status), not a Cairn server's health"))
        }
        return ServerPing(reachable: true, protocolVersion: health.protocol, serverVersion: health.version, roundTrip: roundTrip)
    }
}
