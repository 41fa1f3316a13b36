import Cairn
import CairnProtocol
import Foundation
import Synchronization

/// The end of a chaos run, once the network has healed: every store uploads all it holds, then every store pulls
/// and must hold exactly what the server holds, with every acknowledged private record and no record nobody wrote.
final class ChaosChecks: Sendable {
    let stores: [URL]
    let acknowledged: Set<String>
    let unsure: Set<String>
    let password: String
    private let kept = Mutex(0)

    init(stores: [URL], acknowledged: Set<String>, unsure: Set<String>, password: String) {
        self.stores = stores
        self.acknowledged = acknowledged
        self.unsure = unsure
        self.password = password
    }

    /// Records of killed puts that the server kept.
    var keptUnsure: Int { kept.withLock { $0 } }

    /// What went wrong, as sentences; empty when every store converged.
    func storesConverge(log: (String) -> Void) async -> [String] {
        // The stores' own command-line options open them, as `cairn sync` would; they read the password here.
        setenv("CAIRN_PASSWORD", password, 1)
        var failures: [String] = []
        var clients: [CairnClient] = []
        do {
            for store in stores {
                let client = try await StoreOptions.parse(["--store", store.path]).open(connect: true)
                clients.append(client)
                try await syncPatiently(client)
                if client.hasPendingUpload { failures.append("\(store.lastPathComponent) still has writes to upload") }
                let failed = try client.failedOperations()
                if !failed.isEmpty { failures.append("\(store.lastPathComponent) has \(failed.count) failed operations: \(failed.prefix(3))") }
            }
            var notes: [[String: JSONValue]]?
            for (store, client) in zip(stores, clients) {
                try await syncPatiently(client)
                for collection in ["logs", "notes"] {
                    let verification = try await client.verify(collection)
                    if !verification.matches { failures.append("\(store.lastPathComponent) differs from the server in \(collection): \(verification)") }
                }
                let logs = Set(try client.records(Query("logs")).map(\.id))
                let lost = acknowledged.subtracting(logs)
                if !lost.isEmpty { failures.append("\(lost.count) acknowledged records are missing, such as \(lost.sorted().prefix(5))") }
                let strangers = logs.subtracting(acknowledged).subtracting(unsure)
                if !strangers.isEmpty { failures.append("\(strangers.count) records nobody wrote: \(strangers.sorted().prefix(5))") }
                kept.withLock { $0 = logs.intersection(unsure).count }
                let shared = try client.records(Query("notes")).map(\.data)
                if let notes, notes != shared { failures.append("\(store.lastPathComponent)'s shared records differ from the first store's") }
                notes = notes ?? shared
            }
        } catch {
            failures.append("checking the stores failed: \(error)")
        }
        for client in clients { try? await client.close() }
        return failures
    }

    /// A sync, retried a few times: the server may still be starting after its last kill.
    private func syncPatiently(_ client: CairnClient) async throws {
        var attempt = 0
        while true {
            do {
                try await client.sync()
                return
            } catch {
                attempt += 1
                if attempt >= 10 { throw error }
                try await Task.sleep(for: .milliseconds(500))
            }
        }
    }
}
