#if !(canImport(Darwin) || CAIRN_APPLE_EMULATION)
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import NIOPosix
import Synchronization

/// The transport off Apple platforms (Linux, the tools), on AsyncHTTPClient: streaming and fast uploads.
///
/// A refused connection fails at once with `network_unavailable` (the SDK's retry policy then allows one quick retry);
/// a connection attempt that gets no answer fails after ``connectTimeout``.
///
/// ```swift
/// let transport = AsyncHTTPClientTransport(connectTimeout: .seconds(5))
/// let client = try await CairnClient.open(configuration, transport: transport)
/// ```
public struct AsyncHTTPClientTransport: HTTPTransport {
    let client: HTTPClient
    /// How long a connection attempt may wait for the server before it fails.
    public let connectTimeout: Duration
    /// Streamed: 2xx bodies reach ``TransportRequest/streamedBody`` as they arrive, with backpressure.
    public var streamsResponseBodies: Bool { true }
    /// The largest response body accepted.
    public var maximumResponseBytes: Int = 256 * 1024 * 1024

    /// A transport whose connection attempts give up after `connectTimeout` (default 10 seconds).
    public init(connectTimeout: Duration = .seconds(10)) {
        self.connectTimeout = connectTimeout
        self.client = SharedClients.client(connectTimeout: connectTimeout)
    }

    /// A transport on an `HTTPClient` the app manages, whose connect timeout is `connectTimeout`. Configure its
    /// `retryConnectionEstablishment` as false, or a request to a closed port waits for the whole request timeout.
    public init(client: HTTPClient, connectTimeout: Duration) {
        self.client = client
        self.connectTimeout = connectTimeout
    }

    /// Sends `request` with its ``TransportRequest/timeout`` as the deadline of the whole exchange and collects the
    /// body up to ``maximumResponseBytes`` (or hands a 2xx body to ``TransportRequest/streamedBody`` chunk by chunk); failures become ``CairnError``s (`timed_out`, `cancelled` or
    /// `network_unavailable`).
    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        let prepared = try prepare(request)
        do {
            let response = try await client.execute(prepared, timeout: TimeAmount(request.timeout))
            let headers = response.headers.map { ($0.name, $0.value) }
            request.responseHead?(Int(response.status.code), headers)
            if let streamed = request.streamedBody, (200..<300).contains(Int(response.status.code)) {
                for try await chunk in response.body { try await streamed(Data(buffer: chunk)) }
                return TransportResponse(status: Int(response.status.code), headers: headers, body: Data())
            }
            let body = try await response.body.collect(upTo: maximumResponseBytes)
            return TransportResponse(status: Int(response.status.code), headers: headers, body: Data(buffer: body))
        } catch {
            throw Self.map(error)
        }
    }

    /// Opens `request` with no deadline and yields body chunks as they arrive (for Server-Sent Events, not split at lines);
    /// cancelling the stream cancels the request.
    public func stream(_ request: TransportRequest) async throws -> (status: Int, chunks: AsyncThrowingStream<Data, any Error>) {
        let prepared = try prepare(request)
        let response: HTTPClientResponse
        do {
            response = try await client.execute(prepared, deadline: .distantFuture)
        } catch {
            throw Self.map(error)
        }
        let (stream, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
        let task = Task {
            do {
                for try await chunk in response.body { continuation.yield(Data(buffer: chunk)) }
                continuation.finish()
            } catch {
                continuation.finish(throwing: Self.map(error))
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return (Int(response.status.code), stream)
    }

    /// Sends `request` and streams a 2xx body into `destination` chunk by chunk (never whole in memory), reporting
    /// the bytes received; the deadline is the request's ``TransportRequest/timeout``.
    public func download(_ request: TransportRequest, to destination: URL) async throws -> TransportResponse {
        let prepared = try prepare(request)
        do {
            let response = try await client.execute(prepared, timeout: TimeAmount(request.timeout))
            let headers = response.headers.map { ($0.name, $0.value) }
            guard (200..<300).contains(Int(response.status.code)) else {
                let body = try await response.body.collect(upTo: 1 << 20)
                return TransportResponse(status: Int(response.status.code), headers: headers, body: Data(buffer: body))
            }
            let file = try request.openDownload(destination)
            defer { try? file.close() }
            var received: Int64 = 0
            for try await chunk in response.body {
                try chunk.withUnsafeReadableBytes { bytes in
                    try file.write(bytes)
                    request.received?(bytes)
                }
                received += Int64(chunk.readableBytes)
                request.progress?(received)
            }
            try file.close()
            return TransportResponse(status: Int(response.status.code), headers: headers, body: Data())
        } catch let error as CairnError {
            throw error
        } catch {
            throw Self.map(error)
        }
    }

    private func prepare(_ request: TransportRequest) throws -> HTTPClientRequest {
        var prepared = HTTPClientRequest(url: request.url.absoluteString)
        prepared.method = HTTPMethod(rawValue: request.method)
        for (name, value) in request.headers { prepared.headers.add(name: name, value: value) }
        if let slice = request.bodyFile {
            let chunks = try FileChunks(slice: slice, progress: request.progress)
            prepared.body = .stream(chunks, length: .known(slice.length))
        } else if let body = request.body {
            prepared.body = .bytes(ByteBuffer(bytes: body))
        }
        return prepared
    }

    /// Turns AsyncHTTPClient's and NIO's errors into ``CairnError``s.
    static func map(_ error: any Error) -> CairnError {
        if let error = error as? CairnError { return error }
        if error is CancellationError { return CairnError(.cancelled, "The request was cancelled", cause: error) }
        if let error = error as? HTTPClientError {
            if error == .cancelled { return CairnError(.cancelled, "The request was cancelled", cause: error) }
            if error == .connectTimeout {
                return CairnError(
                    .networkUnavailable, "The server did not accept a connection in time: check the address and the network",
                    isRetryable: true, cause: error, retriesInPlace: false)
            }
            if error == .deadlineExceeded || error == .readTimeout {
                return CairnError(.timedOut, "The server did not answer in time", isRetryable: true, cause: error)
            }
        }
        var failure = CairnError(
            .networkUnavailable, "The server could not be reached (\(Self.reason(error))): check the address and the network",
            isRetryable: true, cause: error)
        failure.connectionRefused = Self.systemError(error) == ECONNREFUSED
        return failure
    }

    /// A short reason for a connection failure, without addresses or data.
    static func reason(_ error: any Error) -> String {
        if let error = error as? NIOConnectionError {
            if systemError(error) == ECONNREFUSED { return "connection refused" }
            if let first = error.connectionErrors.first { return reason(first.error) }
            return error.dnsAAAAError != nil || error.dnsAError != nil ? "the host name did not resolve" : "no connection"
        }
        if let code = (error as? IOError)?.errnoCode {
            switch code {
            case ECONNREFUSED: return "connection refused"
            case ENETUNREACH, EHOSTUNREACH: return "no route to the host"
            case ECONNRESET: return "connection reset"
            default: return "I/O error \(code)"
            }
        }
        if error is ChannelError { return "the connection closed" }
        return String(describing: type(of: error))
    }

    /// The system error under a connection failure. When several addresses were tried (`localhost` as `::1` and
    /// `127.0.0.1`), a refusal by any of them wins: the host answered, and nothing listens there.
    static func systemError(_ error: any Error) -> Int32? {
        if let error = error as? NIOConnectionError {
            let codes = error.connectionErrors.compactMap { systemError($0.error) }
            return codes.contains(ECONNREFUSED) ? ECONNREFUSED : codes.first
        }
        return (error as? IOError)?.errnoCode
    }
}

/// A file slice read chunk by chunk as the connection takes it: reading waits on sending, so a slow network never
/// makes the file pile up in memory.
struct FileChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let slice: TransportFileSlice
    let progress: (@Sendable (Int64) -> Void)?
    static let chunk = 256 * 1024

    init(slice: TransportFileSlice, progress: (@Sendable (Int64) -> Void)?) throws {
        guard FileManager.default.isReadableFile(atPath: slice.url.path) else {
            throw CairnError(.invalidArgument, "\(slice.url.lastPathComponent) cannot be read")
        }
        self.slice = slice
        self.progress = progress
    }

    final class AsyncIterator: AsyncIteratorProtocol {
        let slice: TransportFileSlice
        let progress: (@Sendable (Int64) -> Void)?
        var reader: KeptFileReader?
        var sent: Int64 = 0

        init(slice: TransportFileSlice, progress: (@Sendable (Int64) -> Void)?) {
            self.slice = slice
            self.progress = progress
        }

        func next() async throws -> ByteBuffer? {
            if reader == nil { reader = try slice.reader() }
            guard let data = try reader?.next(upTo: FileChunks.chunk) else {
                reader = nil
                return nil
            }
            sent += Int64(data.count)
            progress?(sent)
            return ByteBuffer(data: data)
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(slice: slice, progress: progress) }
}

/// One `HTTPClient` per connect timeout, kept for the life of the process like `HTTPClient.shared`.
enum SharedClients {
    private static let clients = Mutex<[Duration: HTTPClient]>([:])

    static func client(connectTimeout: Duration) -> HTTPClient {
        clients.withLock { clients in
            if let client = clients[connectTimeout] { return client }
            var configuration = HTTPClient.Configuration()
            configuration.timeout.connect = TimeAmount(connectTimeout)
            // Fail a refused connection at once instead of retrying it until the request's deadline: the SDK's
            // retry policy owns retries, with its own backoff.
            configuration.connectionPool.retryConnectionEstablishment = false
            let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
            clients[connectTimeout] = client
            return client
        }
    }
}
#endif
