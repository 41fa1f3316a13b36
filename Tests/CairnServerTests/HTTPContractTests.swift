import CairnProtocol
@testable import CairnServer
import CairnTesting
import Foundation
import Testing

/// The parts of the HTTP contract that ordinary clients (browsers, Python's `requests`, `curl`) meet first:
/// form-encoded query strings, methods, request ids, and the protocol page agreeing with the OpenAPI document.
@Suite("HTTP contract: query strings, methods, request ids, documents")
struct HTTPContractTests {
    /// Encodes like Python's `urllib.parse.urlencode` (`quote_plus`): spaces become `+`, a plus becomes `%2B`.
    static func formEncode(_ value: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~ ")
        return (value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value).replacingOccurrences(of: " ", with: "+")
    }

    @Test("query strings decode as forms: + is a space, %2B a plus, names too; a malformed escape is bad_request")
    func formDecoding() throws {
        let query = try FormQuery("where=%7B%22a%22:+1%7D&a+b=c%2Bd&flag&empty=&where=second&caf%C3%A9=%E2%9C%93")
        #expect(query.get("where") == #"{"a": 1}"#)
        #expect(query.get("a b") == "c+d")
        #expect(query.get("flag") == "" && query.get("empty") == "")
        #expect(query.get("café") == "✓")
        #expect(query.get("missing") == nil)
        for malformed in ["where=%zz", "where=%4", "where=%", "where=%FF"] {
            #expect(throws: APIError.self, "\(malformed)") { try FormQuery(malformed) }
            do { _ = try FormQuery(malformed) } catch let error as APIError { #expect(error.body.code == .badRequest) }
        }
    }

    @Test("a where filter sent with + for spaces is served; %2B stays a plus")
    func formEncodedQuery() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            _ = try await fixture.push("alice", [
                SyncOperation(opId: newOpID(), collection: "notes", id: "n1", op: .create, data: ["title": "a+b", "done": false]),
                SyncOperation(opId: newOpID(), collection: "notes", id: "n2", op: .create, data: ["title": "a b", "done": true]),
            ])
            let path = "/v1/projects/field/collections/notes/changes"
            func ids(_ filter: String) async throws -> [String] {
                let reply = try await fixture.http.send(.GET, "\(path)?where=\(Self.formEncode(filter))&limit=10", token: fixture.tokens["alice"])
                #expect(reply.status == 200, "\(String(decoding: reply.body, as: UTF8.self))")
                return try reply.decode(ChangesPage.self).changes.map(\.id)
            }
            let spaced = #"{"field": "done", "op": "eq", "value": false}"#
            #expect(Self.formEncode(spaced).contains("+"))
            #expect(try await ids(spaced) == ["n1"])
            #expect(try await ids(#"{"field": "title", "op": "eq", "value": "a+b"}"#) == ["n1"])
            #expect(try await ids(#"{"field": "title", "op": "eq", "value": "a b"}"#) == ["n2"])
            // Percent-encoded spaces keep working.
            let percent = try await fixture.http.send(
                .GET, "\(path)?where=\(Fixture.encode(spaced))", token: fixture.tokens["alice"])
            #expect(try percent.decode(ChangesPage.self).changes.map(\.id) == ["n1"])
            let empty = try await fixture.http.send(.GET, "\(path)?since=", token: fixture.tokens["alice"])
            #expect(empty.status == 422)
            #expect(empty.json?["error"]?["details"]?["field"] == "since")
        }
    }

    @Test("a declared path with an undeclared method is 405 with Allow; an unknown path is 404")
    func methodNotAllowed() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            for (method, path, allow) in [
                ("TRACE", "/v1/projects/field/schema", "GET, PUT"), ("DELETE", "/v1/projects/field/schema", "GET, PUT"),
                ("GET", "/v1/projects/field/batch", "POST"), ("OPTIONS", "/health", "GET"),
                ("PUT", "/v1/projects/field/collections/notes/changes", "GET"),
            ] {
                let reply = try await fixture.http.send(.init(rawValue: method), path, token: fixture.tokens["ada"])
                #expect(reply.status == 405, "\(method) \(path)")
                #expect(reply.errorCode == "method_not_allowed")
                #expect(reply.header("Allow") == allow, "\(method) \(path)")
            }
            let unknown = try await fixture.http.send(.TRACE, "/v1/projects/field/nowhere", token: fixture.tokens["ada"])
            #expect(unknown.status == 404)
            #expect(unknown.header("Allow") == nil)
        }
    }

    @Test("an unusable X-Request-ID is replaced, never refused")
    func requestIDs() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            for sent in [String(repeating: "x", count: 129), "has space"] {
                let reply = try await fixture.http.send(.GET, "/health", headers: ["X-Request-ID": sent])
                #expect(reply.status == 200)
                let id = try #require(reply.header("X-Request-ID"))
                #expect(id != sent && UUID(uuidString: id) != nil)
            }
            let kept = String(repeating: "y", count: 128)
            #expect(try await fixture.http.send(.GET, "/health", headers: ["X-Request-ID": kept]).header("X-Request-ID") == kept)
        }
    }

    @Test("docs/PROTOCOL.md names exactly the routes of the OpenAPI document")
    func protocolPageMatchesOpenAPI() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let document = try #require(try await fixture.http.send(.GET, "/v1/openapi.json").json)
            var declared = Set<String>()
            for (path, item) in document["paths"]?.objectValue ?? [:] {
                for method in (item.objectValue ?? [:]).keys where ["get", "put", "post", "patch", "delete"].contains(method) {
                    declared.insert("\(method.uppercased()) \(path)")
                }
            }
            let page = try String(contentsOf: Self.repositoryRoot.appending(path: "docs/PROTOCOL.md"), encoding: .utf8)
            // Routes on the page: `METHOD /path` in backticks, before the section of what is not served yet.
            let served = page.components(separatedBy: "## Not served yet").first ?? page
            let pattern = try Regex(#"`(GET|PUT|POST|PATCH|DELETE) (/[^ `?]*)"#)
            let named = Set(served.matches(of: pattern).map { match in
                String(served[match.range]).dropFirst().replacingOccurrences(of: "`", with: "")
            })
            #expect(named == declared, "only on the page: \(named.subtracting(declared)); only in OpenAPI: \(declared.subtracting(named))")
        }
    }

    /// The repository's root, found from this file's path.
    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
}
