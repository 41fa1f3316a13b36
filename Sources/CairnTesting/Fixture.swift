import CairnProtocol
import CairnServer
import Foundation
import Logging

/// A server with the standard test project `field`: a schema with one collection per conflict policy, and users
/// of every role, signed in.
///
/// | user | role |
/// | --- | --- |
/// | `ada` | admin |
/// | `alice`, `bob` | writer |
/// | `rita` | reader |
/// | `olga` | none (a member of `other` only) |
public struct Fixture: Sendable {
    /// The running server, with its storage, admin and base URL; ``stop()`` stops it.
    public let server: TestServer
    /// A raw HTTP client against ``server``; pass a ``tokens`` value as `token:` to call as that user.
    public let http: TestHTTPClient
    /// Access tokens by user name.
    public let tokens: [String: String]

    /// `field`: the project ``start(clock:configure:)`` sets up with ``schema`` and the users above.
    public static let project = "field"

    /// `notes` (merge-fields, every field type), `tasks` (reject) and `logs` (last-writer-wins).
    public static let schema = Schema(collections: [
        CollectionSchema(
            name: "notes",
            fields: [
                FieldSchema(name: "title", type: .string), FieldSchema(name: "done", type: .boolean),
                FieldSchema(name: "due", type: .datetime), FieldSchema(name: "photo", type: .file),
                FieldSchema(name: "count", type: .integer), FieldSchema(name: "score", type: .number),
                FieldSchema(name: "tags", type: .json),
            ],
            indexes: [["done", "due"]], conflictPolicy: .mergeFields),
        CollectionSchema(name: "tasks", fields: [FieldSchema(name: "title", type: .string), FieldSchema(name: "rank", type: .integer)]),
        CollectionSchema(name: "logs", fields: [FieldSchema(name: "message", type: .string)], conflictPolicy: .lastWriterWins),
    ])

    /// Starts a server and sets up the project, users and tokens; its data goes to `dataDirectory` when given (then
    /// the test removes it), else to a temporary directory.
    public static func start(
        clock: any WallClock = SystemWallClock(), dataDirectory: URL? = nil, logger: Logger? = nil,
        configure: (inout ServerConfiguration) -> Void = { _ in }
    ) async throws -> Fixture {
        let server = try await TestServer.start(clock: clock, dataDirectory: dataDirectory, logger: logger, configure: configure)
        try await server.setUp(project: project, schema: schema, users: ["ada": .admin, "alice": .writer, "bob": .writer, "rita": .reader])
        try await server.server.admin.addProject("other")
        try await server.server.admin.addUser("olga", password: TestServer.password)
        try await server.server.admin.grant(user: "olga", project: "other", role: .admin)
        let http = TestHTTPClient(baseURL: server.baseURL)
        var tokens: [String: String] = [:]
        for user in ["ada", "alice", "bob", "rita", "olga"] {
            tokens[user] = try await http.login(user).accessToken
        }
        return Fixture(server: server, http: http, tokens: tokens)
    }

    /// Stops the server and removes its temporary data directory.
    public func stop() async { await server.stop() }

    /// Pushes a batch as `user` and returns the results (fails on a non-200).
    public func push(_ user: String, _ operations: [SyncOperation], atomic: Bool = false) async throws -> [OperationResult] {
        let reply = try await http.send(.POST, "/v1/projects/\(Self.project)/batch", token: tokens[user],
                                        value: BatchRequest(atomic: atomic, operations: operations))
        guard reply.status == 200 else {
            throw (try? reply.decode(ErrorEnvelope.self).error) ?? ErrorBody(code: .internalError, message: "batch answered \(reply.status)")
        }
        return try reply.decode(BatchResponse.self).results
    }

    /// One page of the changes feed as `user`.
    public func pull(
        _ user: String, _ collection: String, since: String? = nil, limit: Int? = nil, filter: Filter? = nil, own: String? = nil
    ) async throws -> HTTPReply {
        var query: [String] = []
        if let since { query.append("since=\(Self.encode(since))") }
        if let own { query.append("own=\(Self.encode(own))") }
        if let limit { query.append("limit=\(limit)") }
        if let filter { query.append("where=\(Self.encode(String(decoding: try CairnJSON.encode(filter), as: UTF8.self)))") }
        let path = "/v1/projects/\(Self.project)/collections/\(collection)/changes" + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
        return try await http.send(.GET, path, token: tokens[user])
    }

    /// Follows the feed from `since` until `hasMore` is false; returns every change and the last cursor.
    public func pullAll(
        _ user: String, _ collection: String, since: String? = nil, limit: Int? = nil, filter: Filter? = nil, own: String? = nil
    ) async throws -> (changes: [Change], cursor: String) {
        var cursor = since
        var changes: [Change] = []
        while true {
            let reply = try await pull(user, collection, since: cursor, limit: limit, filter: filter, own: own)
            guard reply.status == 200 else {
                throw (try? reply.decode(ErrorEnvelope.self).error) ?? ErrorBody(code: .internalError, message: "pull answered \(reply.status)")
            }
            let page = try reply.decode(ChangesPage.self)
            changes += page.changes
            cursor = page.cursor
            if !page.hasMore { return (changes, page.cursor) }
        }
    }

    /// Percent-encodes a query value (as the SDK does).
    public static func encode(_ value: String) -> String { PercentEncoding.encode(value) }
}

/// A new time-ordered `opId`, from ``OperationID/make(now:)``.
public func newOpID() -> String { OperationID.make() }
