import Cairn
import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Testing

/// `cairn store rekey|encrypt|decrypt` and `--key-file`, run as a user would, killed at random moments too.
@Suite("Store keys through the command line", .enabled(if: Tool.binary != nil, "the cairn binary is not built next to the tests"), .serialized)
struct StoreKeyToolTests {
    /// A key file holding a fresh raw key (`raw:` and 64 hex digits), and that key.
    static func keyFile(in folder: String) throws -> (path: String, key: StoreKey) {
        let key = StoreKey.generate()
        let path = folder + "/key-\(UUID().uuidString)"
        try Data(("raw:" + key.rawBytes!.map { String(format: "%02x", $0) }.joined() + "\n").utf8).write(to: URL(fileURLWithPath: path))
        return (path, key)
    }

    /// True when `key` opens the store (false for `wrong_key`).
    static func opens(_ store: String, with key: StoreKey) throws -> Bool {
        do {
            _ = try CairnClient.storedIdentity(at: store, key: key)
            return true
        } catch let error as CairnError where error.code == .wrongKey {
            return false
        }
    }

    @Test("a rekey killed at random moments, over a hundred times, always leaves a store that opens with the old or the new key and loses no queued change")
    func killedRekeys() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let store = Fixture.temporaryStorePath()
            let folder = URL(fileURLWithPath: store).deletingLastPathComponent().path
            var current = try Self.keyFile(in: folder)
            let pending = 150
            do {
                let client = try await fixture.client("alice", store: .file(store), network: nil) { $0.storeKey = current.key }
                try client.writeBatch { batch in
                    for index in 0..<400 { try batch.create("logs", id: "synced-\(index)", data: ["message": .string("synced \(index)")]) }
                }
                try await client.sync()
                try client.writeBatch { batch in
                    for index in 0..<pending { try batch.create("logs", id: "queued-\(index)", data: ["message": .string("queued \(index)")]) }
                }
                try await client.close()
            }
            // How long an uninterrupted rekey takes here, to spread the kills over all of it.
            let started = ContinuousClock.now
            let next = try Self.keyFile(in: folder)
            let first = try await Tool.run(["store", "rekey", "--store", store, "--key-file", current.path, "--new-key-file", next.path])
            try #require(first.status == 0, "\(first.stderr)")
            let duration = ContinuousClock.now - started
            current = next
            #expect(try Self.opens(store, with: current.key))

            var random = SystemRandomNumberGenerator()
            var kills = 0, attempts = 0, midCopy = 0
            var bound = duration * 1.1
            // Until a hundred kills, ten of them in the middle of the rewrite: under load more kills land before the copy
            // starts, so a loaded machine runs more attempts rather than fewer kills of the kind that matters most.
            while (kills < 100 || midCopy < 10) && attempts < 700 {
                attempts += 1
                let next = try Self.keyFile(in: folder)
                let delay = bound * Double.random(in: 0...1, using: &random)
                let finished = try await Tool.run(
                    ["store", "rekey", "--store", store, "--key-file", current.path, "--new-key-file", next.path], killedAfter: delay)
                if !finished { kills += 1 }
                // The machine's load changes how long a rekey takes: keep about half the runs killed.
                bound = finished ? bound * 0.85 : bound * 1.05
                // A copy left beside the store: this kill came in the middle of the rewrite itself.
                if !finished, FileManager.default.fileExists(atPath: store + ".rekey") { midCopy += 1 }
                let old = try Self.opens(store, with: current.key), new = try Self.opens(store, with: next.key)
                #expect(old != new, "after attempt \(attempts) (killed: \(!finished)) the old key opens: \(old), the new one: \(new)")
                if new { current = next }
                if !old && !new { break }
            }
            print("killed rekeys: \(kills) kills (\(midCopy) during the copy) in \(attempts) attempts, an uninterrupted rekey took \(duration)")
            #expect(kills >= 100)
            #expect(midCopy >= 10)

            let client = try await fixture.client("alice", store: .file(store), network: nil) { $0.storeKey = current.key }
            #expect(try client.pendingOperations().count == pending)
            try await client.sync()
            #expect(try await client.verify("logs").matches)
            #expect(try client.rows("SELECT count(*) AS n FROM logs") == [["n": .integer(Int64(400 + pending))]])
        }
    }

    @Test("sync, put and query read the passphrase from --key-file or CAIRN_STORE_KEY; encrypt and decrypt work in place")
    func keyFiles() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let store = Fixture.temporaryStorePath()
            let folder = URL(fileURLWithPath: store).deletingLastPathComponent().path
            let keyFile = folder + "/passphrase"
            try Data("correct horse battery\n".utf8).write(to: URL(fileURLWithPath: keyFile))
            let password = ["CAIRN_PASSWORD": TestServer.password]
            let server = ["--server", fixture.server.baseURL.absoluteString, "--project", Fixture.project, "--user", "alice"]
            #expect(try await Tool.run(["sync", "--store", store] + server, environment: password).status == 0)
            let marker = "MARKER-\(UUID().uuidString)"
            #expect(try await Tool.run(["put", "--store", store, "notes", "n1", #"{"title": "\#(marker)"}"#], environment: password).status == 0)

            let encrypted = try await Tool.run(["store", "encrypt", "--store", store, "--new-key-file", keyFile])
            #expect(encrypted.status == 0, "\(encrypted.stderr)")
            let files = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasPrefix("store.sqlite") }
            for name in files {
                #expect(try Data(contentsOf: URL(fileURLWithPath: folder + "/" + name)).range(of: Data(marker.utf8)) == nil, "\(name)")
            }
            let noKey = try await Tool.run(["query", "--store", store, "SELECT title FROM notes"])
            #expect(noKey.status == 1 && noKey.stderr.contains("key_required"), "\(noKey.stderr)")
            let wrong = try await Tool.run(["query", "--store", store, "SELECT title FROM notes"], environment: ["CAIRN_STORE_KEY": "wrong"])
            #expect(wrong.status == 1 && wrong.stderr.contains("wrong_key"), "\(wrong.stderr)")
            let viaFile = try await Tool.run(["query", "--store", store, "--key-file", keyFile, "SELECT title FROM notes"])
            #expect(viaFile.status == 0 && viaFile.stdout.contains(marker), "\(viaFile.stderr)")
            let synced = try await Tool.run(
                ["sync", "--store", store], environment: password.merging(["CAIRN_STORE_KEY": "correct horse battery"]) { $1 })
            #expect(synced.status == 0, "\(synced.stderr)")
            #expect(try await fixture.pullAll("alice", "notes").changes.contains { $0.id == "n1" })

            let decrypted = try await Tool.run(["store", "decrypt", "--store", store, "--key-file", keyFile])
            #expect(decrypted.status == 0, "\(decrypted.stderr)")
            #expect(try await Tool.run(["query", "--store", store, "SELECT title FROM notes"]).stdout.contains(marker))
        }
    }
}
