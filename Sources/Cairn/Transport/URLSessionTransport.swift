#if canImport(Darwin)
import Foundation

/// A transport on `URLSession`, for Apple platforms: the system network stack, with its proxy, VPN and cellular
/// settings, and background sessions when the app configures one.
public struct URLSessionTransport: HTTPTransport {
    let session: URLSession

    /// A transport on `session` (by default `URLSession.shared`), so the app's session configuration (extra headers,
    /// proxies, cellular access) applies to sync traffic.
    public init(session: URLSession = .shared) { self.session = session }

    /// Sends `request` with `URLSession.data(for:)`; URL errors become ``CairnError``s (`timed_out`, `cancelled`, otherwise
    /// `network_unavailable`, all but `cancelled` retryable).
    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        do {
            var prepared = urlRequest(request)
            if let slice = request.bodyFile, slice.sealing != nil {
                // An encrypted store's file is decrypted in memory, one slice per request: the uploader sends at most
                // ``FileUploader/sealedSliceBytes`` at a time from such a file.
                var body = Data(capacity: Int(slice.length))
                try await slice.read { body.append($0) }
                prepared.httpBody = body
            }
            let (data, response) = try await session.data(for: prepared)
            if let slice = request.bodyFile { request.progress?(slice.length) }
            let http = response as? HTTPURLResponse
            return TransportResponse(status: http?.statusCode ?? 0, headers: headers(http), body: data)
        } catch let error as CairnError {
            throw error
        } catch {
            throw Self.map(error)
        }
    }

    /// Opens `request` with `URLSession.bytes(for:)` and yields its body line by line (each chunk ends with `\n`), as
    /// Server-Sent Events arrive; cancelling the stream cancels the request.
    public func stream(_ request: TransportRequest) async throws -> (status: Int, chunks: AsyncThrowingStream<Data, any Error>) {
        let (bytes, response): (URLSession.AsyncBytes, URLResponse)
        do {
            (bytes, response) = try await session.bytes(for: urlRequest(request))
        } catch {
            throw Self.map(error)
        }
        let (stream, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
        let task = Task {
            do {
                var line = Data()
                for try await byte in bytes {
                    line.append(byte)
                    if byte == 0x0A { continuation.yield(line); line.removeAll() }
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: Self.map(error))
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, stream)
    }

    /// Sends `request` and writes a 2xx body into `destination` as it arrives, in 64 KB writes, reporting the bytes
    /// received.
    public func download(_ request: TransportRequest, to destination: URL) async throws -> TransportResponse {
        do {
            let (bytes, response) = try await session.bytes(for: urlRequest(request))
            let http = response as? HTTPURLResponse
            let status = http?.statusCode ?? 0
            guard (200..<300).contains(status) else {
                var body = Data()
                for try await byte in bytes where body.count < 1 << 20 { body.append(byte) }
                return TransportResponse(status: status, headers: headers(http), body: body)
            }
            let file = try request.openDownload(destination)
            defer { try? file.close() }
            var buffer = Data()
            buffer.reserveCapacity(64 * 1024)
            var received: Int64 = 0
            for try await byte in bytes {
                buffer.append(byte)
                if buffer.count == 64 * 1024 {
                    try file.write(buffer)
                    buffer.withUnsafeBytes { request.received?($0) }
                    received += Int64(buffer.count)
                    request.progress?(received)
                    buffer.removeAll(keepingCapacity: true)
                }
            }
            try file.write(buffer)
            try file.close()
            buffer.withUnsafeBytes { request.received?($0) }
            request.progress?(received + Int64(buffer.count))
            return TransportResponse(status: status, headers: headers(http), body: Data())
        } catch let error as CairnError {
            throw error
        } catch {
            throw Self.map(error)
        }
    }

    private func urlRequest(_ request: TransportRequest) -> URLRequest {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method
        urlRequest.httpBody = request.body
        if let slice = request.bodyFile, slice.sealing == nil, let stream = InputStream(url: slice.url) {
            // The stream starts at the slice's offset; Content-Length stops it at the slice's end.
            stream.setProperty(NSNumber(value: slice.offset), forKey: .fileCurrentOffsetKey)
            urlRequest.httpBodyStream = stream
            urlRequest.setValue("\(slice.length)", forHTTPHeaderField: "Content-Length")
        }
        let (seconds, attoseconds) = request.timeout.components
        urlRequest.timeoutInterval = Double(seconds) + Double(attoseconds) / 1e18
        for (name, value) in request.headers { urlRequest.addValue(value, forHTTPHeaderField: name) }
        return urlRequest
    }

    private func headers(_ response: HTTPURLResponse?) -> [(String, String)] {
        (response?.allHeaderFields ?? [:]).compactMap { key, value in
            guard let key = key as? String else { return nil }
            return (key, "\(value)")
        }
    }

    static func map(_ error: any Error) -> CairnError {
        if let error = error as? URLError {
            if error.code == .timedOut { return CairnError(.timedOut, "The server did not answer in time", isRetryable: true, cause: error) }
            if error.code == .cancelled { return CairnError(.cancelled, "The request was cancelled", cause: error) }
        }
        var failure = CairnError(
            .networkUnavailable, "The server could not be reached: check the address and the network", isRetryable: true, cause: error)
        // URLSession's name for a refused connection.
        failure.connectionRefused = (error as? URLError)?.code == .cannotConnectToHost
        return failure
    }
}
#endif
