import Cairn
import CairnProtocol
import Foundation

/// Measures what a store key costs, plaintext and encrypted stores side by side in one run: the initial pull of
/// `pullRecords` records from a `cairn serve` child process, the download of a `fileMegabytes` file from it into the
/// store's file cache, indexed lookups among `lookupRecords` local records, and re-keying the encrypted lookup store. Encrypted stores use a raw key (a passphrase adds PBKDF2's time once per
/// open, which is reported apart).
struct EncryptionBenchmark {
    let pullRecords: Int
    let lookupRecords: Int
    let fileMegabytes: Int
    let rounds: Int
    let log: (String) -> Void
    let password = UUID().uuidString
    let key = StoreKey.generate()

    func run() async throws -> [String: JSONValue] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cairn-encryption-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var figures: [String: JSONValue] = ["pullRecords": .integer(Int64(pullRecords)), "lookupRecords": .integer(Int64(lookupRecords))]
        let server = try await SyncBenchmark.startServer(in: directory.appendingPathComponent("server"), users: ["bench"], password: password)
        defer { server.stop() }
        figures.merge(try await measurePull(directory, server: server)) { $1 }
        figures.merge(try await measureDownload(directory, server: server)) { $1 }
        figures.merge(try await measureLookups(directory)) { $1 }
        // What a passphrase adds to each open: PBKDF2-SHA256's 600,000 rounds.
        let small = directory.appendingPathComponent("passphrase.sqlite")
        _ = try JSONCaches(location: .file(small.path), key: .passphrase("bench passphrase"))
        let opens = try BenchTiming.medianMilliseconds(5) { _ in _ = try JSONCaches(location: .file(small.path), key: .passphrase("bench passphrase")) }
        log(String(format: "opening a store with a passphrase: median %.0f ms", opens))
        figures["passphraseOpenMilliseconds"] = .number(BenchTiming.rounded(opens))
        return figures
    }

    /// Plaintext first in even rounds, encrypted first in odd ones: neither side always runs in the wake of the
    /// other (its disk writes still being flushed, its memory still being reclaimed).
    static func order(_ round: Int) -> [Bool] { round.isMultiple(of: 2) ? [false, true] : [true, false] }

    /// The median of `samples`.
    private func median(_ samples: [Double]) -> Double { samples.sorted()[samples.count / 2] }

    // MARK: Initial pull

    private func clientConfiguration(_ server: ServerProcess, store path: String, encrypted: Bool) -> CairnConfiguration {
        var configuration = CairnConfiguration(
            serverURL: server.baseURL, project: SyncBenchmark.project, device: "bench", credentials: .password(user: "bench", password: password),
            store: .file(path))
        configuration.storeKey = encrypted ? key : nil
        configuration.fileCacheBytes = Int64(fileMegabytes + 1) << 20
        return configuration
    }

    private func measurePull(_ directory: URL, server: ServerProcess) async throws -> [String: JSONValue] {
        let http = RawHTTP(baseURL: server.baseURL)
        try await SyncBenchmark.pushRaw(http, token: try await http.login("bench", password: password), records: pullRecords, batchSize: 1000)
        log("server holds \(pullRecords) records")
        var seconds: [Bool: [Double]] = [false: [], true: []]
        for round in 0..<rounds {
            for encrypted in Self.order(round) {
                let configuration = clientConfiguration(
                    server, store: directory.appendingPathComponent("pull-\(round)-\(encrypted).sqlite").path, encrypted: encrypted)
                let start = ContinuousClock.now
                let client = try await CairnClient.open(configuration)
                try await client.sync()
                seconds[encrypted, default: []].append(BenchTiming.seconds(since: start))
                guard try client.rows("SELECT count(*) AS n FROM raw_items") == [["n": .integer(Int64(pullRecords))]] else {
                    throw CLIError("the pull did not bring every record")
                }
                try await client.close()
            }
        }
        let plain = median(seconds[false]!), encrypted = median(seconds[true]!)
        log(String(format: "initial pull of %d records: %.2f s plaintext, %.2f s encrypted (%+.1f%%)", pullRecords, plain, encrypted,
                   (encrypted / plain - 1) * 100))
        return [
            "pullSecondsPlain": .number(BenchTiming.rounded(plain)), "pullSecondsEncrypted": .number(BenchTiming.rounded(encrypted)),
            "pullEncryptedToPlain": .number(BenchTiming.rounded(encrypted / plain)),
        ]
    }

    // MARK: A large file download

    /// Uploads one file of `fileMegabytes` MB, then downloads it into fresh stores' caches, plaintext and encrypted in
    /// turn: the cache of an encrypted store seals it segment by segment as it arrives.
    private func measureDownload(_ directory: URL, server: ServerProcess) async throws -> [String: JSONValue] {
        let source = try TransportBenchmark.makeFile(directory.appendingPathComponent("large.bin"), megabytes: fileMegabytes)
        let uploader = try await CairnClient.open(clientConfiguration(server, store: directory.appendingPathComponent("upload.sqlite").path, encrypted: false))
        let localID = try uploader.files.upload(from: source, name: "large.bin")
        await uploader.files.waitForUploads()
        guard let id = try uploader.files.upload(localID)?.serverID else { throw CLIError("the \(fileMegabytes) MB file did not upload") }
        try await uploader.close()
        try FileManager.default.removeItem(at: source)
        log("server holds a \(fileMegabytes) MB file")

        var seconds: [Bool: [Double]] = [false: [], true: []]
        for round in 0..<rounds {
            for encrypted in Self.order(round) {
                let path = directory.appendingPathComponent("download-\(round)-\(encrypted).sqlite").path
                let client = try await CairnClient.open(clientConfiguration(server, store: path, encrypted: encrypted))
                let start = ContinuousClock.now
                try await client.files.download(id)
                seconds[encrypted, default: []].append(BenchTiming.seconds(since: start))
                try await client.signOut()
            }
        }
        let plain = median(seconds[false]!), encrypted = median(seconds[true]!)
        log(String(format: "download of a %d MB file into the cache: %.2f s plaintext, %.2f s encrypted (%+.1f%%)", fileMegabytes, plain, encrypted,
                   (encrypted / plain - 1) * 100))
        return [
            "downloadMegabytes": .integer(Int64(fileMegabytes)),
            "downloadSecondsPlain": .number(BenchTiming.rounded(plain)), "downloadSecondsEncrypted": .number(BenchTiming.rounded(encrypted)),
            "downloadEncryptedToPlain": .number(BenchTiming.rounded(encrypted / plain)),
        ]
    }

    // MARK: Indexed lookups, and re-keying

    private func lookupClient(_ path: String, encrypted: Bool) async throws -> CairnClient {
        var configuration = CairnConfiguration(
            serverURL: URL(string: "http://127.0.0.1:9")!, project: "bench", device: "bench",
            credentials: .password(user: "bench", password: "unused"), store: .file(path))
        configuration.connectOnOpen = false
        configuration.localCollections = [QueryBenchmark.items]
        configuration.localIndexes = ["items": [["code"]]]
        configuration.storeKey = encrypted ? key : nil
        return try await CairnClient.open(configuration)
    }

    private func measureLookups(_ directory: URL) async throws -> [String: JSONValue] {
        var clients: [Bool: CairnClient] = [:]
        var paths: [Bool: String] = [:]
        for encrypted in [false, true] {
            let path = directory.appendingPathComponent("lookup-\(encrypted).sqlite").path
            let client = try await lookupClient(path, encrypted: encrypted)
            let start = ContinuousClock.now
            for first in stride(from: 0, to: lookupRecords, by: 20_000) {
                try client.writeBatch { batch in
                    for index in first..<min(first + 20_000, lookupRecords) {
                        try batch.save("items", id: "i-\(index)", data: QueryBenchmark.item(index))
                    }
                }
            }
            log(String(format: "filled %d local records %@ in %.1f s", lookupRecords, encrypted ? "encrypted" : "plaintext",
                       BenchTiming.seconds(since: start)))
            clients[encrypted] = client
            paths[encrypted] = path
        }
        var samples: [Bool: [Double]] = [false: [], true: []]
        for round in 0..<rounds {
            for encrypted in Self.order(round) {
                let client = clients[encrypted]!
                samples[encrypted]!.append(try BenchTiming.medianMilliseconds(200) { lookup in
                    let code = "code-\(((lookup + round * 200) &* 48_271) % lookupRecords)"
                    let found = try client.records(Query("items").filter(.condition("code", .eq, .string(code))))
                    guard found.count == 1 else { throw CLIError("the lookup found \(found.count) records") }
                })
            }
        }
        let plain = median(samples[false]!), encrypted = median(samples[true]!)
        log(String(format: "indexed lookup among %d records: median %.3f ms plaintext, %.3f ms encrypted (%+.1f%%)", lookupRecords, plain,
                   encrypted, (encrypted / plain - 1) * 100))
        for client in clients.values { try await client.close() }

        let path = paths[true]!
        let bytes = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value ?? 0
        let start = ContinuousClock.now
        try StoreEncryption.rekey(storeAt: path, from: key, to: StoreKey.generate())
        let rekey = BenchTiming.seconds(since: start)
        log(String(format: "rekey of a %.0f MB store: %.2f s (%.2f s per 100 MB)", Double(bytes) / 1e6, rekey, rekey * 1e8 / Double(max(bytes, 1))))
        return [
            "lookupMillisecondsPlain": .number(BenchTiming.rounded(plain)), "lookupMillisecondsEncrypted": .number(BenchTiming.rounded(encrypted)),
            "lookupEncryptedToPlain": .number(BenchTiming.rounded(encrypted / plain)),
            "rekeyStoreBytes": .integer(bytes), "rekeySeconds": .number(BenchTiming.rounded(rekey)),
            "rekeySecondsPer100MB": .number(BenchTiming.rounded(rekey * 1e8 / Double(max(bytes, 1)))),
        ]
    }
}
