import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Testing

/// PostgreSQL's text cannot hold U+0000, and SQLite's can: on either backend such input is refused or matches
/// nothing, and never fails the request (found by schemathesis against the PostgreSQL backend).
@Suite("U+0000 in input")
struct NULInputTests {
    @Test("a sign-in, a batch, a file search and a client registration holding U+0000 are answered, not failed")
    func answered() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let login = try await fixture.http.send(.POST, "/v1/auth/login", json: ["username": "al\u{0}ice", "password": "x"])
            #expect(login.status == 401)

            let batch = try await fixture.http.send(.POST, "/v1/projects/field/batch", token: fixture.tokens["alice"], json: [
                "operations": [
                    ["opId": "nul-1", "collection": "no\u{0}tes", "id": "a", "op": "create", "data": [:]],
                    ["opId": "nul-2", "collection": "notes", "id": "a\u{0}b", "op": "create", "data": [:]],
                    ["opId": "nul\u{0}3", "collection": "notes", "id": "c", "op": "create", "data": [:]],
                ],
            ])
            #expect(batch.status == 200)
            let statuses = try batch.decode(BatchResponse.self).results.map(\.status)
            #expect(statuses == [.rejected, .rejected, .rejected])

            for query in ["tag=a%00b", "name=x%00%25", "after=a%00b"] {
                let search = try await fixture.http.send(.GET, "/v1/projects/field/files?\(query)", token: fixture.tokens["alice"])
                #expect(search.status == 200, "\(query)")
            }

            let client = try await fixture.http.send(.POST, "/v1/projects/field/clients", token: fixture.tokens["alice"], json: ["device": "pho\u{0}ne"])
            #expect(client.status == 422)
        }
    }
}
