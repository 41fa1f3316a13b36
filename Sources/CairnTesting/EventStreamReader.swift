import AsyncHTTPClient
import CairnProtocol
import Foundation
import NIOCore

/// Reads a Server-Sent Events stream in the background and hands out its `data:` payloads, for tests and tools.
///
/// ```swift
/// let events = try await EventStreamReader.open(url: url, token: token)
/// let data = try await events.nextData()
/// ```
public actor EventStreamReader {
    private var reader = ServerSentEvents()
    private var payloads: [String] = []
    private var ended = false
    private var task: Task<Void, Never>?

    /// Opens the stream and returns once the server answered 200.
    public static func open(url: URL, token: String) async throws -> EventStreamReader {
        var request = HTTPClientRequest(url: url.absoluteString)
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        request.headers.add(name: "Accept", value: "text/event-stream")
        let response = try await HTTPClient.shared.execute(request, timeout: .hours(1))
        guard response.status == .ok else { throw URLError(.badServerResponse) }
        let reader = EventStreamReader()
        await reader.consume(response.body)
        return reader
    }

    private func consume(_ body: HTTPClientResponse.Body) {
        task = Task {
            do {
                for try await chunk in body { self.append(chunk.readableBytesView) }
            } catch {}
            self.finish()
        }
    }

    private func append(_ bytes: ByteBufferView) {
        payloads += reader.feed(bytes).compactMap(\.data)
    }

    private func finish() { ended = true }

    /// The next event's `data:` payload, however long it takes to come (a busy machine only makes it later); throws
    /// when the stream ends, or when the waiting task is cancelled (a test's `.timeLimit`).
    public func nextData() async throws -> String {
        while payloads.isEmpty {
            guard !ended else { throw URLError(.networkConnectionLost) }
            try await Task.sleep(for: .milliseconds(10))
        }
        return payloads.removeFirst()
    }

    /// The next event's `data:` payload; throws when the stream ends or `timeout` passes first. For tools that must
    /// give up; a test waits with ``nextData()`` and lets its time limit be the safety net.
    public func nextData(timeout: Duration) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        while payloads.isEmpty {
            guard !ended else { throw URLError(.networkConnectionLost) }
            guard ContinuousClock.now < deadline else { throw URLError(.timedOut) }
            try await Task.sleep(for: .milliseconds(10))
        }
        return payloads.removeFirst()
    }

    /// Closes the stream.
    public func close() { task?.cancel() }
}
