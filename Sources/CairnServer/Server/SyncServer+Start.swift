import Foundation
import Hummingbird
import Synchronization

/// A server started in the background by ``SyncServer/start()``.
public struct RunningServer: Sendable {
    /// The bound port.
    public let port: Int
    /// `http://host:port`.
    public let baseURL: URL
    let task: Task<Void, any Error>

    /// Stops the server and waits until it has.
    public func stop() async {
        task.cancel()
        _ = await task.result
    }
}

extension SyncServer {
    /// Starts serving in a background task and returns once the port is bound (use port 0 for a free one).
    ///
    /// ```swift
    /// let running = try await server.start()
    /// print(running.baseURL)
    /// await running.stop()
    /// ```
    public func start() async throws -> RunningServer {
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let application = makeApplication { port in continuation.yield(port) }
        let task = Task {
            defer { continuation.finish() }
            try await application.runService(gracefulShutdownSignals: [])
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else {
            // The server stopped before binding: surface its error.
            try await task.value
            throw APIError(.internalServerError, .unavailable, "The server stopped before it was listening")
        }
        return RunningServer(port: port, baseURL: URL(string: "http://\(configuration.host):\(port)")!, task: task)
    }
}
