import Cairn
import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Testing

@Suite("Convergence")
struct ConvergenceTests {
    @Test("clients making random offline creates, patches and deletes, syncing in random orders, all converge",
          arguments: [UInt64(1), 2, 3])
    func randomHistories(seed: UInt64) async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            var random = SplitMix(seed: seed)
            let users = ["alice", "bob", "ada"]
            var clients: [CairnClient] = []
            for (index, user) in users.enumerated() {
                clients.append(try await fixture.client(user) {
                    $0.conflictResolver = index == 0 ? .merge(fallback: .client) : index == 1 ? .serverWins : .merge(fallback: .server)
                    $0.batchSize = 5
                })
            }
            let collections = ["notes", "tasks", "logs"]
            var acknowledgedCreates: [String: Set<String>] = [:]
            var deletedSomewhere: Set<String> = []
            // Every queued change a client had when a sync began: afterwards each must be applied on the server, or
            // have met a conflict that its client resolved and recorded.
            var uploaded: [(client: Int, operation: PendingOperation)] = []
            for round in 0..<12 {
                for (index, client) in clients.enumerated() {
                    for step in 0..<(1 + random.next(below: 5)) {
                        let collection = collections[random.next(below: collections.count)]
                        let shared = "s\(random.next(below: 6))"
                        let value = JSONValue.string("\(users[index])-\(round)-\(step)")
                        let field = collection == "logs" ? "message" : "title"
                        switch random.next(below: 4) {
                        case 0:
                            let unique = "u-\(users[index])-\(round)-\(step)"
                            try client.create(collection, id: unique, data: [field: value])
                            acknowledgedCreates[collection, default: []].insert(unique)
                        case 1:
                            try client.save(collection, id: shared, data: [field: value])
                        case 2:
                            if try client.record(collection, id: shared) != nil {
                                try client.patch(collection, id: shared, collection == "notes" ? ["count": .integer(Int64(round))] : [field: value])
                            }
                        default:
                            if try client.record(collection, id: shared) != nil {
                                try client.delete(collection, id: shared)
                                deletedSomewhere.insert("\(collection)/\(shared)")
                            }
                        }
                    }
                }
                // Sync in a random order; some clients skip a round (still offline).
                for index in clients.indices.shuffled(using: &random) where random.next(below: 3) > 0 {
                    uploaded += try clients[index].pendingOperations().map { (index, $0) }
                    try await clients[index].sync()
                }
            }
            for _ in 0..<2 {
                for (index, client) in clients.enumerated() {
                    uploaded += try client.pendingOperations().map { (index, $0) }
                    try await client.sync()
                }
            }
            let storage = fixture.server.server.storage
            let resolved = try clients.map { client in Set(try client.conflicts().map { "\($0.conflict.collection)/\($0.conflict.id)" }) }
            for (index, operation) in uploaded {
                let status = try await storage.operationStatus(project: Fixture.project, opId: operation.opId)
                let key = "\(operation.collection)/\(operation.recordID)"
                #expect(status == .applied || (status == .conflict && resolved[index].contains(key)),
                        "\(users[index])'s \(operation.kind.rawValue) of \(key) ended \(status.map(\.rawValue) ?? "unseen")")
            }
            for client in clients {
                #expect(!client.hasPendingUpload)
                #expect(try client.failedOperations().isEmpty)
                for collection in collections {
                    #expect(try await client.verify(collection).matches, "\(collection)")
                    let ids = Set(try client.records(Query(collection)).map(\.id))
                    // Records created with unique ids are never touched by anyone else: every one must be there.
                    #expect(acknowledgedCreates[collection, default: []].isSubset(of: ids))
                }
            }
            for collection in collections {
                let reference = try clients[0].records(Query(collection)).map { [$0.id: JSONValue.object($0.data)] }
                for client in clients.dropFirst() {
                    #expect(try client.records(Query(collection)).map { [$0.id: JSONValue.object($0.data)] } == reference)
                }
            }
            let conflicts = try clients.flatMap { try $0.conflicts() }
            print("convergence seed \(seed): \(uploaded.count) uploads checked, \(conflicts.count) conflicts resolved, \(deletedSomewhere.count) shared records deleted at some point")
        }
    }
}

