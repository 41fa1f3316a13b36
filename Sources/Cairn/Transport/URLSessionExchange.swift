import Foundation
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One request's life on a ``URLSessionTransport``'s session: the session's delegate hands it the answer's bytes,
/// the bytes sent and the end, and it writes them where the request wants them (collected, streamed, or written to
/// a download's file as they come) and wakes the caller waiting for the first bytes or the end.
final class URLSessionExchange: Sendable {
    /// Where the answer's body goes.
    enum Answer: Sendable {
        /// Collected whole, returned by ``response()``.
        case collect
        /// Yielded chunk by chunk as it arrives.
        case stream(AsyncThrowingStream<Data, any Error>.Continuation)
        /// A 2xx body written to the file through the request's ``TransportRequest/openDownload(_:)``; another
        /// answer's body collected (up to 1 MB).
        case download(TransportRequest, URL)
    }

    /// What a caller waits for.
    enum Stage: Sendable {
        /// The first bytes of the answer's body (or the end, when it has none).
        case firstBytes
        /// The end of the request.
        case end
    }

    private struct State {
        var response: HTTPURLResponse?
        var body = Data()
        var file: KeptFileWriter?
        var received: Int64 = 0
        /// True once the server showed it is there: bytes of its answer came, bytes of the body were sent, or its
        /// address took a connection (``ConnectProbe``).
        var heard = false
        /// A failure of the exchange itself (the file could not be written, the connect timeout), which wins over
        /// the cancellation it causes.
        var failure: CairnError?
        var outcome: Result<Void, any Error>?
        var waiters: [(stage: Stage, continuation: CheckedContinuation<Void, Never>)] = []

        func reached(_ stage: Stage) -> Bool { outcome != nil || (stage == .firstBytes && response != nil) }
    }

    /// The session's task, cancelled when the caller's task is, or a stream's reader stops.
    let task: URLSessionTask?
    private let answer: Answer
    private let progress: (@Sendable (Int64) -> Void)?
    private let onReceived: (@Sendable (UnsafeRawBufferPointer) -> Void)?
    private let onHead: (@Sendable (Int, [(String, String)]) -> Void)?
    private let upload: URLSessionUpload?
    private let state = Mutex(State())

    init(
        task: URLSessionTask, answer: Answer, progress: (@Sendable (Int64) -> Void)?,
        received: (@Sendable (UnsafeRawBufferPointer) -> Void)?, head: (@Sendable (Int, [(String, String)]) -> Void)? = nil,
        upload: URLSessionUpload?
    ) {
        self.task = task
        self.answer = answer
        self.progress = progress
        self.onReceived = received
        self.onHead = head
        self.upload = upload
    }

    /// Waits until `stage` is reached.
    func wait(for stage: Stage) async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state in
                if state.reached(stage) { return true }
                state.waiters.append((stage, continuation))
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Fails the request with `network_unavailable` when the server cannot be reached within `connectTimeout`
    /// (URLSession has no connect timeout of its own); cancel the returned task once the request no longer needs it.
    ///
    /// A request that heard nothing for half the time asks ``ConnectProbe`` whether the server's address takes
    /// connections, for at most the other half: a server that does is alive and merely slow to answer (a long query,
    /// a busy machine), and the request waits on under its own timeout.
    func watch(connectTimeout: Duration) -> Task<Void, Never> {
        Task { [task] in
            guard (try? await Task.sleep(for: connectTimeout / 2)) != nil, let url = task?.originalRequest?.url else { return }
            guard !state.withLock({ $0.heard || $0.outcome != nil }) else { return }
            let alive = await ConnectProbe.reaches(url, within: connectTimeout / 2)
            guard !Task.isCancelled else { return }
            if alive { return state.withLock { $0.heard = true } }
            let silent = state.withLock { state in
                guard !state.heard, state.outcome == nil else { return false }
                state.failure = CairnError(
                    .networkUnavailable, "The server did not answer within the connect timeout: check the address and the network",
                    isRetryable: true, retriesInPlace: false)
                return true
            }
            if silent { task?.cancel() }
        }
    }

    /// The answer: its status and headers, and its body when collected; throws the request's failure as a
    /// ``CairnError``. A stream's answer is there once its first bytes came, whatever happens after.
    func response() throws -> TransportResponse {
        try state.withLock { state in
            let streamed = if case .stream = answer { true } else { false }
            if case .failure(let error)? = state.outcome, !(streamed && state.response != nil) { throw URLSessionTransport.map(error) }
            guard let response = state.response else {
                throw CairnError(.networkUnavailable, "The server closed the connection without answering", isRetryable: true)
            }
            return TransportResponse(status: response.statusCode, headers: Self.headers(of: response), body: state.body)
        }
    }

    /// The headers of `response` as name and value pairs.
    static func headers(of response: HTTPURLResponse) -> [(String, String)] {
        response.allHeaderFields.compactMap { key, value in (key as? String).map { ($0, "\(value)") } }
    }

    // MARK: Events from the session's delegate (on its serial queue)

    /// Takes the next bytes of the answer; returns false when the request must stop (its file could not be written).
    func received(_ data: Data, response: URLResponse?) -> Bool {
        var ready: [CheckedContinuation<Void, Never>] = []
        var head: HTTPURLResponse?
        let carryOn = state.withLock { state in
            state.heard = true
            if state.response == nil {
                state.response = response as? HTTPURLResponse
                head = state.response
                ready = take(.firstBytes, from: &state)
            }
            do {
                try deliver(data, into: &state)
                return true
            } catch {
                state.failure = URLSessionTransport.map(error)
                return false
            }
        }
        if let head, let onHead { onHead(head.statusCode, Self.headers(of: head)) }
        for continuation in ready { continuation.resume() }
        return carryOn
    }

    /// Takes the count of body bytes sent so far.
    func sent(_ total: Int64) {
        state.withLock { $0.heard = true }
        progress?(total)
    }

    /// Ends the request with URLSession's `error` (nil for success).
    func completed(_ error: (any Error)?, response: URLResponse?) {
        let (outcome, ready) = state.withLock { state in
            if state.response == nil { state.response = response as? HTTPURLResponse }
            if error == nil, state.failure == nil { finishDownload(&state) }
            if let file = state.file {
                do { try file.close() } catch { state.failure = state.failure ?? URLSessionTransport.map(error) }
                state.file = nil
            }
            let outcome: Result<Void, any Error> =
                if let failure = state.failure { .failure(failure) } else if let error { .failure(error) } else { .success(()) }
            state.outcome = outcome
            return (outcome, take(nil, from: &state))
        }
        upload?.remove()
        if case .stream(let continuation) = answer {
            switch outcome {
            case .success: continuation.finish()
            case .failure(let error): continuation.finish(throwing: URLSessionTransport.map(error))
            }
        }
        for continuation in ready { continuation.resume() }
    }

    private func deliver(_ data: Data, into state: inout State) throws {
        switch answer {
        case .collect:
            state.body.append(data)
        case .stream(let continuation):
            continuation.yield(data)
        case .download(let request, let destination):
            guard let response = state.response, (200..<300).contains(response.statusCode) else {
                if state.body.count < 1 << 20 { state.body.append(data.prefix((1 << 20) - state.body.count)) }
                return
            }
            let file = try state.file ?? request.openDownload(destination)
            state.file = file
            try data.withUnsafeBytes { bytes in
                try file.write(bytes)
                onReceived?(bytes)
            }
            state.received += Int64(data.count)
            progress?(state.received)
        }
    }

    /// A 2xx download with an empty body still makes its file, as one with bytes does.
    private func finishDownload(_ state: inout State) {
        guard case .download(let request, let destination) = answer, state.file == nil,
            let status = state.response?.statusCode, (200..<300).contains(status)
        else { return }
        do { state.file = try request.openDownload(destination) } catch { state.failure = URLSessionTransport.map(error) }
    }

    /// Removes and returns the waiters `stage` releases (all of them for nil, the end).
    private func take(_ stage: Stage?, from state: inout State) -> [CheckedContinuation<Void, Never>] {
        let released = state.waiters.filter { stage == nil || $0.stage == stage }
        state.waiters.removeAll { stage == nil || $0.stage == stage }
        return released.map(\.continuation)
    }
}
