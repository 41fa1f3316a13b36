import CairnProtocol
import Foundation
import Logging

/// A transport that logs each request it passes on (``CairnConfiguration/traceRequests``): method, path, status,
/// time and bytes, at `debug`. With ``CairnConfiguration/traceWithData`` it adds the query string and the JSON bodies,
/// except those of sign-in and token refresh (passwords and tokens), and never headers (they carry the token).
/// ``TraceFormat/pretty`` writes the same as a readable block (``PrettyTrace``).
struct TracingTransport: HTTPTransport {
    let inner: any HTTPTransport
    let logger: Logger
    let withData: Bool
    var format = TraceFormat.compact

    var streamsResponseBodies: Bool { inner.streamsResponseBodies }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        try await traced(request) { try await inner.send(request) }
    }

    func download(_ request: TransportRequest, to destination: URL) async throws -> TransportResponse {
        try await traced(request) { try await inner.download(request, to: destination) }
    }

    func stream(_ request: TransportRequest) async throws -> (status: Int, chunks: AsyncThrowingStream<Data, any Error>) {
        let start = ContinuousClock.now
        do {
            let opened = try await inner.stream(request)
            log(request, status: opened.status, start: start, responseBody: nil)
            return opened
        } catch {
            log(request, failure: error, start: start)
            throw error
        }
    }

    private func traced(_ request: TransportRequest, _ send: () async throws -> TransportResponse) async throws -> TransportResponse {
        let start = ContinuousClock.now
        do {
            let response = try await send()
            log(request, status: response.status, start: start, responseBody: response.body)
            return response
        } catch {
            log(request, failure: error, start: start)
            throw error
        }
    }

    private func log(_ request: TransportRequest, status: Int, start: ContinuousClock.Instant, responseBody: Data?) {
        var metadata = common(request, start: start)
        metadata["cairn.status"] = "\(status)"
        if let responseBody { metadata["cairn.response_bytes"] = "\(responseBody.count)" }
        emit(request, metadata, message: "request", responseBody: responseBody)
    }

    private func log(_ request: TransportRequest, failure: any Error, start: ContinuousClock.Instant) {
        var metadata = common(request, start: start)
        metadata["cairn.error"] = "\(CairnError(wrapping: failure).code.rawValue)"
        emit(request, metadata, message: "request failed", responseBody: nil)
    }

    /// Logs one request in the configured ``TraceFormat``: `message` with the facts as metadata (and the answer's
    /// body, with data), or a ``PrettyTrace`` block with the same metadata less the bodies.
    private func emit(_ request: TransportRequest, _ facts: Logger.Metadata, message: String, responseBody: Data?) {
        var metadata = facts
        let withBodies = withData && !Self.carriesSecrets(request.url)
        switch format {
        case .compact:
            if withBodies, let responseBody, !responseBody.isEmpty {
                metadata["cairn.response"] = "\(String(decoding: responseBody, as: UTF8.self))"
            }
            logger.debug("\(message)", metadata: metadata)
        case .pretty:
            metadata["cairn.request"] = nil
            let trace = PrettyTrace(request: request, facts: metadata, withData: withData, withBodies: withBodies, responseBody: responseBody)
            logger.debug("\(trace.text)", metadata: metadata)
        }
    }

    private func common(_ request: TransportRequest, start: ContinuousClock.Instant) -> Logger.Metadata {
        var metadata: Logger.Metadata = [
            "cairn.method": "\(request.method)", "cairn.path": "\(request.url.path)",
            "cairn.ms": "\((ContinuousClock.now - start).milliseconds)",
        ]
        if let body = request.body { metadata["cairn.request_bytes"] = "\(body.count)" }
        if let file = request.bodyFile { metadata["cairn.request_bytes"] = "\(file.length)" }
        if withData {
            if let query = request.url.query { metadata["cairn.query"] = "\(query)" }
            if !Self.carriesSecrets(request.url), let body = request.body {
                metadata["cairn.request"] = "\(String(decoding: body, as: UTF8.self))"
            }
        }
        return metadata
    }

    /// Sign-in and refresh bodies hold passwords and tokens: never logged, even with data.
    static func carriesSecrets(_ url: URL) -> Bool { url.path.contains("/v1/auth/") }
}
