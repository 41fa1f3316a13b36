import CairnProtocol
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import ServiceLifecycle

/// `GET .../events`: Server-Sent Events, one `data:` line per collection change, comments as heartbeats.
/// Mounted at `v1/projects/:project`.
struct EventRoutes: ProjectRouteGroup {
    let access: AccessControl
    let notifier: ChangeNotifier
    let metrics: ServerMetrics
    /// Seconds between keep-alive comments.
    let heartbeat: TimeInterval
    /// What heartbeats wait on.
    let timers: any Clock<Duration>
    /// The SSE `retry` hint sent when the server shuts down.
    static let reconnectMilliseconds = 1000

    func add(to routes: ProjectRoutes) {
        routes.on(.get, "events", requires: .reader) { request, context, caller in
            let stream = await notifier.subscribe(project: caller.project)
            let noticeFilter = try await NoticeFilter(access: access, caller: caller)
            let heartbeat = self.heartbeat, timers = self.timers
            let metrics = self.metrics
            let body = ResponseBody { writer in
                metrics.eventStreams(+1)
                defer { metrics.eventStreams(-1) }
                try await writer.write(ByteBuffer(string: ": connected\n\n"))
                // The stream ends when the client leaves, or when the server shuts down.
                try await withThrowingTaskGroup(of: Void.self) { group in
                    let (ticks, tick) = AsyncStream<ByteBuffer>.makeStream()
                    // The last thing sent: come back soon (to another instance, or to this one restarted).
                    let end: @Sendable () -> Void = {
                        tick.yield(ByteBuffer(string: "retry: \(Self.reconnectMilliseconds)\n: server shutting down\n\n"))
                        tick.finish()
                    }
                    group.addTask {
                        var noticeFilter = noticeFilter
                        for await notice in stream where await noticeFilter.admits(notice) {
                            let json = (try? CairnJSON.encode(notice)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
                            tick.yield(ByteBuffer(string: "event: change\ndata: \(json)\n\n"))
                        }
                        // The notifier ends its streams only at shutdown.
                        end()
                    }
                    group.addTask {
                        while !Task.isCancelled {
                            try await timers.sleep(for: .seconds(heartbeat))
                            tick.yield(ByteBuffer(string: ": keep-alive\n\n"))
                        }
                    }
                    group.addTask {
                        try await gracefulShutdown()
                        end()
                    }
                    for await buffer in ticks {
                        try await writer.write(buffer)
                    }
                    group.cancelAll()
                }
                try await writer.finish(nil)
            }
            return Response(status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"], body: body)
        }
    }
}
