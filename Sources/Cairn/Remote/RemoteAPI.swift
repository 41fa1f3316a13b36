import CairnProtocol
import Foundation

/// The server's HTTP API as typed calls: signs every request, refreshes tokens on 401, retries network failures,
/// timeouts and 5xx with the retry policy, and turns every other answer into a ``CairnError``.
struct RemoteAPI: Sendable {
    let baseURL: URL
    let project: String
    let transport: any HTTPTransport
    let auth: AuthSession
    let retry: RetryPolicy
    let timeout: Duration
    let clock: any Clock<Duration>
    let clientID: @Sendable () async -> String?
    /// gzip on the wire: compressed answers asked for and read, bodies compressed when the server reads them.
    var compression = WireCompression(enabled: true)
    /// The schema number the app build was made for, sent as `Cairn-Schema-Version`; `nil`: the current one.
    var schemaVersion: Int?
    /// Where retries are told.
    var log: SyncLog = .off

    // MARK: Calls

    // Sign-in and refresh run inside another call's retries (that call asks for a token first), so they make one
    // attempt each: retrying here too would multiply the attempts.

    func login(_ credentials: Credentials) async throws -> TokenResponse {
        guard case .password(let user, let password) = credentials else { throw CairnError.invalid("login needs a password") }
        let body = try CairnJSON.encode(LoginRequest(username: user, password: password))
        let response = try await send(method: "POST", path: "/v1/auth/login", body: body, authorized: false, retries: false)
        return try decode(TokenResponse.self, response)
    }

    func refresh(_ refreshToken: String) async throws -> TokenResponse {
        let body = try CairnJSON.encode(RefreshRequest(refreshToken: refreshToken))
        let response = try await send(method: "POST", path: "/v1/auth/refresh", body: body, authorized: false, retries: false)
        return try decode(TokenResponse.self, response)
    }

    /// The schema the app build was made for (the current one when the server has no such number yet), or `nil`
    /// when it still has the ETag `etag`.
    func schema(etag: String?) async throws -> (schema: Schema, etag: String?)? {
        let headers = etag.map { [("If-None-Match", $0)] } ?? []
        var response = try await send(
            method: "GET", path: "/v1/projects/\(project)/schema" + (schemaVersion.map { "?version=\($0)" } ?? ""), headers: headers,
            accept: [200, 304, 404])
        if response.status == 404 {
            response = try await send(method: "GET", path: "/v1/projects/\(project)/schema", headers: headers, accept: [200, 304])
        }
        if response.status == 304 { return nil }
        return (try decode(Schema.self, response), response.header("ETag"))
    }

    /// One page of the changes feed, as the raw JSON body (the store applies it in SQL), with the times it took.
    /// `next` is told the cursor of the page after this one as soon as the answer's head names it (`Cairn-Cursor`,
    /// with `Cairn-Has-More: true`), before the body arrived. `own` lists the versions of the store's own writes,
    /// whose states the feed need not send back.
    func changes(
        collection: String, since: String?, limit: Int, filter: Filter?, own: VersionRanges? = nil, next: (@Sendable (String) -> Void)? = nil
    ) async throws -> PageArrival {
        let path = try changesPath(collection: collection, since: since, limit: limit, filter: filter, own: own)
        let timing = PageArrival.Timing()
        let head: @Sendable (Int, [(String, String)]) -> Void = { status, headers in
            timing.headArrived(serverTiming: TransportResponse.header(CairnHeader.serverTiming, in: headers))
            guard let next, status == 200, TransportResponse.header(CairnHeader.hasMore, in: headers) == "true",
                let cursor = TransportResponse.header(CairnHeader.cursor, in: headers)
            else { return }
            next(cursor)
        }
        let body = try await send(method: "GET", path: path, head: head).body
        return timing.arrived(body)
    }

    /// The path of a changes request; `pages` above 1 asks for that many pages in one answer (``PageStream``).
    func changesPath(collection: String, since: String?, limit: Int, filter: Filter?, own: VersionRanges?, pages: Int = 1) throws -> String {
        var query = ["limit=\(limit)"]
        if let since { query.append("since=\(PercentEncoding.encode(since))") }
        if let own, !own.isEmpty { query.append("own=\(own.text)") }
        if let filter { query.append("where=\(PercentEncoding.encode(String(decoding: try CairnJSON.encode(filter), as: UTF8.self)))") }
        if pages > 1 { query.append("\(PageStream.parameter)=\(pages)") }
        return "/v1/projects/\(project)/collections/\(collection)/changes?" + query.joined(separator: "&")
    }

    func batch(_ operations: [PendingOperation]) async throws -> [ScannedResult] {
        let body = Data(PendingOperation.batchBody(operations))
        // The data of writes committed as sent stays out of the answer: the queue has it.
        // The headers the batch's writes were made with (``WriteOptions/headers``: a batch's writes share them).
        let written = (operations.first?.headers ?? [:]).sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        let response = try await send(
            method: "POST", path: "/v1/projects/\(project)/batch", body: body,
            headers: [(CairnHeader.prefer, "\(CairnHeader.returnMinimal), \(CairnHeader.positionalResults)")] + written)
        let results: [ScannedResult]
        do {
            results = try response.body.withUnsafeBytes { raw in try BatchResultsScanner.scan(raw.bindMemory(to: UInt8.self)) }
        } catch {
            throw CairnError.badResponse("the batch answer could not be read: \(error)", cause: error)
        }
        // With results=positional, a minimal answer's applied write leaves out its opId: results come in the order of
        // the operations.
        guard results.count == operations.count,
            zip(results, operations).allSatisfy({ $0.opId == $1.opId || ($0.opId.isEmpty && $0.status == .applied) })
        else {
            throw CairnError.badResponse("the batch results do not match the operations sent")
        }
        return zip(results, operations).map { result, operation in
            var result = result
            result.opId = operation.opId
            return result
        }
    }

    func digest(collection: String) async throws -> DigestResponse {
        try decode(DigestResponse.self, try await send(method: "GET", path: "/v1/projects/\(project)/collections/\(collection)/digest"))
    }

    func registerClient(device: String, app: String?) async throws -> String {
        let body = try CairnJSON.encode(ClientRegistrationRequest(device: device, app: app))
        let response = try await send(method: "POST", path: "/v1/projects/\(project)/clients", body: body, accept: [201, 200])
        return try decode(ClientRegistration.self, response).clientId
    }

    /// Opens the live-notice stream.
    func events() async throws -> AsyncThrowingStream<Data, any Error> {
        let token = try await auth.token()
        var headers = [("Authorization", "Bearer \(token)"), ("Accept", "text/event-stream")]
        if let id = await clientID() { headers.append((CairnHeader.clientID, id)) }
        let request = TransportRequest(method: "GET", url: url("/v1/projects/\(project)/events"), headers: headers, timeout: .seconds(3600 * 24))
        let (status, chunks) = try await transport.stream(request)
        guard status == 200 else { throw CairnError(status == 401 ? .unauthorized : .badResponse, "The event stream answered \(status)", httpStatus: status, isRetryable: true) }
        return chunks
    }

    // MARK: Plumbing

    /// Sends a request; with `retries`, network failures, timeouts and 5xx are retried with the retry policy (a
    /// refused connection with its shorter schedule).
    func send(
        method: String, path: String, body: Data? = nil, headers: [(String, String)] = [], authorized: Bool = true, accept: Set<Int> = [200],
        retries: Bool = true, transfer: Transfer? = nil, head: (@Sendable (Int, [(String, String)]) -> Void)? = nil,
        streamed: Streamed? = nil
    ) async throws -> TransportResponse {
        try await retry.run(
            on: clock, retries: { retries && $0.isRetryable && $0.retriesInPlace },
            willRetry: { attempt, delay, error in log.requestRetried(method, path, attempt: attempt, in: delay, cause: error) }
        ) {
            try await sendOnce(
                method: method, path: path, body: body, headers: headers, authorized: authorized, accept: accept, transfer: transfer,
                head: head, streamed: streamed)
        }
    }

    /// A 2xx answer's body handed over chunk by chunk as it arrives (``TransportRequest/streamedBody``), with the
    /// deadline of the whole exchange.
    struct Streamed: Sendable {
        var chunk: @Sendable (Data) async throws -> Void
        var timeout: Duration
    }

    /// A file moved by a request: its body streamed from disk, or its answer streamed to disk, with progress.
    struct Transfer: Sendable {
        var upload: TransportFileSlice?
        var downloadTo: URL?
        var sealing: FileSealing?
        var progress: (@Sendable (Int64) -> Void)?
        var received: (@Sendable (UnsafeRawBufferPointer) -> Void)?
        var timeout: Duration
    }

    private func sendOnce(
        method: String, path: String, body: Data?, headers: [(String, String)], authorized: Bool, accept: Set<Int>, transfer: Transfer?,
        head: (@Sendable (Int, [(String, String)]) -> Void)?, streamed: Streamed?
    ) async throws -> TransportResponse {
        var allHeaders = headers
        if body != nil { allHeaders.append(("Content-Type", "application/json")) }
        if transfer?.upload != nil { allHeaders.append(("Content-Type", "application/octet-stream")) }
        if let id = await clientID() { allHeaders.append((CairnHeader.clientID, id)) }
        if let schemaVersion { allHeaders.append((CairnHeader.schemaVersion, String(schemaVersion))) }
        var token: String?
        if authorized { token = try await auth.token() }
        var refreshed = false
        while true {
            var requestHeaders = allHeaders
            if let token { requestHeaders.append(("Authorization", "Bearer \(token)")) }
            // JSON calls only: files move as they are.
            let (sentBody, compressed) = transfer == nil ? compression.prepare(body: body, headers: &requestHeaders) : (body, false)
            var request = TransportRequest(
                method: method, url: url(path), headers: requestHeaders, body: sentBody, timeout: transfer?.timeout ?? timeout)
            request.bodyFile = transfer?.upload
            request.progress = transfer?.progress
            request.received = transfer?.received
            request.downloadSealing = transfer?.sealing
            request.responseHead = head
            if let streamed {
                request.streamedBody = streamed.chunk
                request.timeout = streamed.timeout
            }
            var response: TransportResponse
            if let destination = transfer?.downloadTo {
                response = try await transport.download(request, to: destination)
            } else {
                response = try await transport.send(request)
            }
            response = try compression.received(response, sentCompressed: compressed)
            if accept.contains(response.status) {
                // A transport that collected a streamed body: it is handed over whole.
                if let streamed, !response.body.isEmpty, (200..<300).contains(response.status) {
                    try await streamed.chunk(response.body)
                    response.body = Data()
                }
                return response
            }
            // The server does not read compressed bodies after all: it is now known, and the body goes plain.
            if WireCompression.refusedCompression(response, sentCompressed: compressed) { continue }
            if response.status == 401, authorized, !refreshed, let refused = token {
                refreshed = true
                token = try await auth.refused(refused)
                continue
            }
            throw CairnError.server(status: response.status, body: response.body)
        }
    }

    func decode<T: Decodable>(_ type: T.Type, _ response: TransportResponse) throws -> T {
        do {
            return try CairnJSON.decode(type, from: response.body)
        } catch {
            throw CairnError.badResponse("\(T.self) could not be read", cause: error)
        }
    }

    func url(_ path: String) -> URL {
        URL(string: baseURL.absoluteString.trimmingCharacters(in: CharacterSet(charactersIn: "/")) + path)!
    }
}
