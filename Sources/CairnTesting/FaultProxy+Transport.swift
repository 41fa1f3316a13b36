import AsyncHTTPClient
import Cairn
import CairnLinkShaping
import Foundation

extension FaultProxy {
    /// A transport that opens a new connection for every request, so every request meets its own fault; call
    /// `shutdown` when done. On Linux it is AsyncHTTPClient even when fixture clients use URLSession: Linux's
    /// FoundationNetworking stops the process (a `fatalError`) when a connection is cut inside an answer's headers.
    /// Built for Apple platforms it is URLSession, which keeps connections open between requests and has no
    /// setting against it, so it asks the server to close each one after its answer.
    public static func freshConnectionTransport() -> (transport: any HTTPTransport, shutdown: @Sendable () async -> Void) {
        #if canImport(Darwin) || CAIRN_APPLE_EMULATION
        return (ConnectionClosing(inner: URLSessionTransport(configuration: .ephemeral)), {})
        #else
        var configuration = HTTPClient.Configuration()
        configuration.maximumUsesPerConnection = 1
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.timeout.connect = .seconds(10)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        return (AsyncHTTPClientTransport(client: client, connectTimeout: .seconds(10)), { try? await client.shutdown() })
        #endif
    }
}

/// Sends every request with `Connection: close`, so the server ends the connection after answering and the next
/// request opens a new one.
private struct ConnectionClosing: HTTPTransport {
    let inner: any HTTPTransport

    private func closing(_ request: TransportRequest) -> TransportRequest {
        var request = request
        request.headers.append(("Connection", "close"))
        return request
    }

    func send(_ request: TransportRequest) async throws -> TransportResponse { try await inner.send(closing(request)) }

    func stream(_ request: TransportRequest) async throws -> (status: Int, chunks: AsyncThrowingStream<Data, any Error>) {
        try await inner.stream(closing(request))
    }

    func download(_ request: TransportRequest, to destination: URL) async throws -> TransportResponse {
        try await inner.download(closing(request), to: destination)
    }
}
