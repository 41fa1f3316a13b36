import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A transport on `URLSession`: the SDK's transport on Apple platforms (the system network stack, with its proxy,
/// VPN and cellular settings), and available on Linux too (FoundationNetworking), where the tests run the whole
/// client suite over it.
///
/// Bodies move in chunks through the session's delegate: answers are written to a download's file or yielded to the
/// live-notice stream as they arrive, and a file is uploaded from disk with its progress reported as bytes go.
///
/// URLSession has no connect timeout of its own, so ``connectTimeout`` is enforced here as the longest wait for a
/// first sign of the server: the first bytes of its answer, the first bytes of a body it accepted, or (asked when a
/// request heard nothing for half the time) a TCP connection its address accepts. A request that has none by then
/// fails with `network_unavailable`, as a connection attempt that gets no answer does on `AsyncHTTPClientTransport`;
/// a server that is reachable but slow to start answering is waited for, under the request's own timeout.
///
/// On Linux, prefer the default AsyncHTTPClient transport in production: FoundationNetworking (Swift 6.3) stops the
/// process with a `fatalError` when a connection is cut inside an answer's headers, and uploads at about half the speed.
///
/// ```swift
/// let configuration = URLSessionConfiguration.default
/// configuration.allowsCellularAccess = false
/// let transport = URLSessionTransport(configuration: configuration, connectTimeout: .seconds(5))
/// let client = try await CairnClient.open(cairnConfiguration, transport: transport)
/// ```
public struct URLSessionTransport: HTTPTransport {
    let session: URLSessionHandle
    /// How long a request may wait for a first sign of the server before it fails with `network_unavailable`.
    public let connectTimeout: Duration

    /// A transport on one session shared by the process, made from `URLSessionConfiguration.default`.
    public init(connectTimeout: Duration = .seconds(10)) {
        self.session = URLSessionHandle.shared
        self.connectTimeout = connectTimeout
    }

    /// A transport on a session of its own made from `configuration`, so the app's settings (extra headers,
    /// proxies, cellular access) apply to sync traffic. Responses are never read from the session's cache.
    public init(configuration: URLSessionConfiguration, connectTimeout: Duration = .seconds(10)) {
        self.session = URLSessionHandle(configuration: configuration)
        self.connectTimeout = connectTimeout
    }

    /// Sends `request` and collects the answer's body; a ``TransportRequest/bodyFile`` is uploaded from disk with
    /// ``TransportRequest/progress`` told the bytes sent. URL errors become ``CairnError``s (`timed_out`,
    /// `cancelled`, otherwise `network_unavailable`, all but `cancelled` retryable).
    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        let exchange = try await perform(request, answer: .collect)
        return try exchange.response()
    }

    /// Opens `request` and yields its body's chunks as they arrive (for Server-Sent Events, not split at lines),
    /// once the first bytes came; cancelling the stream cancels the request.
    public func stream(_ request: TransportRequest) async throws -> (status: Int, chunks: AsyncThrowingStream<Data, any Error>) {
        let (chunks, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
        let exchange = try await perform(request, answer: .stream(continuation), until: .firstBytes)
        let status = try exchange.response().status
        continuation.onTermination = { [task = exchange.task] _ in task?.cancel() }
        return (status, chunks)
    }

    /// Sends `request` and writes a 2xx body into `destination` as it arrives, through
    /// ``TransportRequest/openDownload(_:)``, reporting the bytes received; another answer's body is returned whole.
    public func download(_ request: TransportRequest, to destination: URL) async throws -> TransportResponse {
        let exchange = try await perform(request, answer: .download(request, destination))
        return try exchange.response()
    }

    /// Starts `request` on the session and waits for its end (or its first bytes); cancelling the caller's task
    /// cancels the request.
    private func perform(
        _ request: TransportRequest, answer: URLSessionExchange.Answer, until stage: URLSessionExchange.Stage = .end
    ) async throws -> URLSessionExchange {
        let upload = try URLSessionUpload(request.bodyFile)
        let prepared = urlRequest(request)
        let task: URLSessionTask =
            switch upload {
            case nil: session.session.dataTask(with: prepared)
            case .memory(let body)?: session.session.uploadTask(with: prepared, from: body)
            case .file(let file, _)?: session.session.uploadTask(with: prepared, fromFile: file)
            }
        let exchange = URLSessionExchange(
            task: task, answer: answer, progress: request.progress, received: request.received, head: request.responseHead, upload: upload)
        session.events.register(exchange, for: task)
        task.resume()
        let watch = exchange.watch(connectTimeout: connectTimeout)
        defer { watch.cancel() }
        await withTaskCancellationHandler {
            await exchange.wait(for: stage)
        } onCancel: {
            task.cancel()
        }
        return exchange
    }

    private func urlRequest(_ request: TransportRequest) -> URLRequest {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method
        urlRequest.httpBody = request.bodyFile == nil ? request.body : nil
        // Sync must see the server's answer, never a cached one.
        urlRequest.cachePolicy = .reloadIgnoringLocalCacheData
        // URLSession's timeout is the longest wait between two bytes.
        let (seconds, attoseconds) = request.timeout.components
        urlRequest.timeoutInterval = Double(seconds) + Double(attoseconds) / 1e18
        for (name, value) in request.headers { urlRequest.addValue(value, forHTTPHeaderField: name) }
        return urlRequest
    }

    /// Turns URLSession's errors into ``CairnError``s.
    static func map(_ error: any Error) -> CairnError {
        if let error = error as? CairnError { return error }
        if error is CancellationError { return CairnError(.cancelled, "The request was cancelled", cause: error) }
        let code = (error as? URLError)?.code
        if code == .timedOut { return CairnError(.timedOut, "The server did not answer in time", isRetryable: true, cause: error) }
        if code == .cancelled { return CairnError(.cancelled, "The request was cancelled", cause: error) }
        var failure = CairnError(
            .networkUnavailable, "The server could not be reached (\(reason(code))): check the address and the network",
            isRetryable: true, cause: error)
        // URLSession's name for a refused connection (libcurl's "couldn't connect" on Linux).
        failure.connectionRefused = code == .cannotConnectToHost
        return failure
    }

    /// A short reason for a failure to reach the server, without addresses or data.
    static func reason(_ code: URLError.Code?) -> String {
        switch code {
        case .cannotConnectToHost?: "connection refused"
        case .cannotFindHost?, .dnsLookupFailed?: "the host name did not resolve"
        case .networkConnectionLost?: "the connection closed"
        case .notConnectedToInternet?: "no network"
        case .secureConnectionFailed?, .serverCertificateUntrusted?, .serverCertificateHasBadDate?: "the secure connection failed"
        case let code?: "URL error \(code.rawValue)"
        case nil: "no connection"
        }
    }
}
