import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOFoundationCompat

/// The default transport, on AsyncHTTPClient: streaming, fast uploads, and the same behaviour on Linux and Apple platforms.
public struct AsyncHTTPClientTransport: HTTPTransport {
    let client: HTTPClient
    /// The largest response body accepted.
    public var maximumResponseBytes: Int = 256 * 1024 * 1024

    /// A transport on the shared `HTTPClient`.
    public init(client: HTTPClient = .shared) { self.client = client }

    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        let prepared = prepare(request)
        do {
            let response = try await client.execute(prepared, timeout: TimeAmount(request.timeout))
            let body = try await response.body.collect(upTo: maximumResponseBytes)
            return TransportResponse(
                status: Int(response.status.code), headers: response.headers.map { ($0.name, $0.value) }, body: Data(buffer: body))
        } catch let error as CairnError {
            throw error
        } catch is CancellationError {
            throw CairnError(.cancelled, "The request was cancelled")
        } catch {
            throw Self.map(error)
        }
    }

    public func stream(_ request: TransportRequest) async throws -> (status: Int, chunks: AsyncThrowingStream<Data, any Error>) {
        let prepared = prepare(request)
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

    private func prepare(_ request: TransportRequest) -> HTTPClientRequest {
        var prepared = HTTPClientRequest(url: request.url.absoluteString)
        prepared.method = HTTPMethod(rawValue: request.method)
        for (name, value) in request.headers { prepared.headers.add(name: name, value: value) }
        if let body = request.body { prepared.body = .bytes(ByteBuffer(bytes: body)) }
        return prepared
    }

    static func map(_ error: any Error) -> CairnError {
        if let error = error as? CairnError { return error }
        if error is CancellationError { return CairnError(.cancelled, "The request was cancelled") }
        if let error = error as? HTTPClientError, error == .deadlineExceeded || error == .readTimeout || error == .connectTimeout {
            return CairnError(.timedOut, "The server did not answer in time", isRetryable: true, cause: error)
        }
        return CairnError(.networkUnavailable, "The server could not be reached: \(type(of: error))", isRetryable: true,
                          cause: error)
    }
}

extension TimeAmount {
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
