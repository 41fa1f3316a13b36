import Cairn
import Foundation
import Synchronization

/// A transport whose network can be switched off, or made to fail on purpose, for tests.
///
/// ```swift
/// let network = SwitchableTransport()
/// network.isOnline = false      // every request fails as if offline
/// network.loseResponses = 2     // the next 2 requests reach the server, but their answers are lost
/// ```
public final class SwitchableTransport: HTTPTransport, Sendable {
    private let state = Mutex(State())
    private let inner: any HTTPTransport

    struct State {
        var online = true
        var loseResponses = 0
        var losePath: String?
        var requests = 0
        var answer: (@Sendable (TransportRequest) -> TransportResponse?)?
    }

    /// A transport that passes requests to `inner` (by default the fixture clients' kind, ``TestTransport/make(connectTimeout:)``)
    /// while online.
    public init(inner: any HTTPTransport = TestTransport.make()) { self.inner = inner }

    /// When false, every request fails with `network_unavailable` before reaching the server.
    public var isOnline: Bool {
        get { state.withLock { $0.online } }
        set { state.withLock { $0.online = newValue } }
    }

    /// As its inner transport.
    public var streamsResponseBodies: Bool { inner.streamsResponseBodies }

    /// How many of the next requests reach the server but lose their answer.
    public var loseResponses: Int {
        get { state.withLock { $0.loseResponses } }
        set { state.withLock { $0.loseResponses = newValue; $0.losePath = nil } }
    }

    /// Loses the answers of the next `count` requests whose path contains `path` (they still reach the server).
    public func loseResponses(_ count: Int, whenPathContains path: String) {
        state.withLock {
            $0.loseResponses = count
            $0.losePath = path
        }
    }

    /// How many requests ``send(_:)`` was given so far, including those failed offline or answered by ``intercept(_:)``.
    public var requestCount: Int { state.withLock { $0.requests } }

    /// Replaces the server's answers: return a response to answer in its place, `nil` to pass through.
    public func intercept(_ answer: (@Sendable (TransportRequest) -> TransportResponse?)?) { state.withLock { $0.answer = answer } }

    /// Counts the request, then fails it as `network_unavailable` when offline, answers it through ``intercept(_:)``, or
    /// sends it on, losing the answer (also `network_unavailable`) when ``loseResponses`` says so.
    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        let (online, answer) = state.withLock { state -> (Bool, (@Sendable (TransportRequest) -> TransportResponse?)?) in
            state.requests += 1
            return (state.online, state.answer)
        }
        guard online else { throw CairnError(.networkUnavailable, "offline (test)", isRetryable: true) }
        if let answer, let response = answer(request) { return response }
        let response = try await inner.send(request)
        let lose = state.withLock { state -> Bool in
            guard state.loseResponses > 0, state.losePath.map({ request.url.path.contains($0) }) ?? true else { return false }
            state.loseResponses -= 1
            return true
        }
        if lose { throw CairnError(.networkUnavailable, "the answer was lost (test)", isRetryable: true) }
        return response
    }

    /// Opens the live-notice stream through the inner transport, or fails with `network_unavailable` when offline; going
    /// offline later does not close a stream already open, and streams are not counted or intercepted.
    public func stream(_ request: TransportRequest) async throws -> (status: Int, chunks: AsyncThrowingStream<Data, any Error>) {
        guard isOnline else { throw CairnError(.networkUnavailable, "offline (test)", isRetryable: true) }
        return try await inner.stream(request)
    }

    /// Downloads through the inner transport, streaming to the file, or fails with `network_unavailable` when
    /// offline; counted like ``send(_:)``, not intercepted.
    public func download(_ request: TransportRequest, to destination: URL) async throws -> TransportResponse {
        let online = state.withLock { state -> Bool in
            state.requests += 1
            return state.online
        }
        guard online else { throw CairnError(.networkUnavailable, "offline (test)", isRetryable: true) }
        return try await inner.download(request, to: destination)
    }
}
