import CairnProtocol
import Foundation
import Hummingbird
import ServiceLifecycle

/// A server started in the background by ``SyncServer/start(port:)``.
public struct RunningServer: Sendable {
    /// The bound port.
    public let port: Int
    /// `http://host:port`.
    public let baseURL: URL
    let group: ServiceGroup
    let task: Task<Void, any Error>
    /// What the grace period waits on (the server's timers).
    let timers: any Clock<Duration>

    /// Stops the server gracefully (requests in flight finish, live-notice streams close) and waits until it has;
    /// after `grace` it stops at once.
    public func stop(grace: Duration = .seconds(5)) async {
        await group.triggerGracefulShutdown()
        let task = self.task, timers = self.timers
        let deadline = Task {
            try await timers.sleep(for: grace)
            task.cancel()
        }
        _ = await task.result
        deadline.cancel()
    }
}

extension SyncServer {
    /// Starts serving in a background task and returns once the port is bound: on `port`, or the configuration's
    /// (0 picks a free one). The storage runs with it: stopping closes the storage too (``EmbeddedServer`` keeps
    /// it open across listener restarts).
    ///
    /// ```swift
    /// let running = try await server.start()
    /// print(running.baseURL)
    /// await running.stop()
    /// ```
    public func start(port: Int? = nil) async throws -> RunningServer {
        try await start(port: port, runsStorage: true)
    }

    /// Starts serving; without `runsStorage`, stopping leaves the storage open (``EmbeddedServer`` listens again).
    func start(port: Int?, runsStorage: Bool) async throws -> RunningServer {
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let application = makeApplication(port: port, runsStorage: runsStorage) { port in continuation.yield(port) }
        let group = ServiceGroup(configuration: .init(services: [application], gracefulShutdownSignals: [], logger: logger))
        let task = Task {
            defer { continuation.finish() }
            try await group.run()
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else {
            // The server stopped before binding: surface its error.
            try await task.value
            throw ErrorBody(code: .unavailable, message: "The server stopped before it was listening")
        }
        return RunningServer(port: port, baseURL: URL(string: "http://\(configuration.host):\(port)")!, group: group, task: task, timers: timers)
    }
}
