import Cairn
import CairnProtocol
import Foundation
import GRDB

/// Measures local reads and JSON caches in the SDK, each beside plain GRDB doing the same work on a table of the same
/// shape in the same run: indexed lookups over `records` rows, full-text search over `searchRecords` rows, and
/// caching `cacheEntries` JSON objects. No server is needed: the data lives in local-only collections.
struct QueryBenchmark {
    let records: Int
    let searchRecords: Int
    let cacheEntries: Int
    let log: (String) -> Void

    static let items = CollectionSchema(name: "items", fields: [
        FieldSchema(name: "code", type: .string), FieldSchema(name: "count", type: .integer),
        FieldSchema(name: "title", type: .string), FieldSchema(name: "score", type: .number),
    ])
    static let notes = CollectionSchema(name: "notes", fields: [FieldSchema(name: "title", type: .string), FieldSchema(name: "body", type: .string)])

    /// Words of the searchable text: a few common, most rare.
    static let words: [String] = (0..<2000).map { "w\($0)" } + ["exit", "fire", "alarm", "door", "ladder", "valve", "pump", "roof"]

    static func item(_ index: Int) -> [String: JSONValue] {
        ["code": .string("code-\(index)"), "count": .integer(Int64(index)), "title": .string("Item \(index)"), "score": .number(Double(index % 1000) / 10)]
    }

    static func note(_ index: Int) -> [String: JSONValue] {
        let pick = { (salt: Int) in words[(index &* 7919 &+ salt &* 104_729) % words.count] }
        let title = "\(pick(1)) \(pick(2)) \(pick(3))"
        let body = (4..<24).map(pick).joined(separator: " ")
        return ["title": .string(title), "body": .string(body)]
    }

    func run() async throws -> [String: JSONValue] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cairn-query-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var figures: [String: JSONValue] = ["records": .integer(Int64(records)), "searchRecords": .integer(Int64(searchRecords))]
        figures.merge(try await measureQueries(directory)) { $1 }
        figures.merge(try measureCache(directory)) { $1 }
        return figures
    }

    // MARK: Indexed lookups and full-text search

    private func measureQueries(_ directory: URL) async throws -> [String: JSONValue] {
        var configuration = CairnConfiguration(
            serverURL: URL(string: "http://127.0.0.1:9")!, project: "bench", device: "bench",
            credentials: .password(user: "bench", password: "unused"), store: .file(directory.appendingPathComponent("client.sqlite").path))
        configuration.connectOnOpen = false
        configuration.localCollections = [Self.items, Self.notes]
        configuration.localIndexes = ["items": [["code"], ["count"]]]
        configuration.fullTextSearch = ["notes": ["title", "body"]]
        return try measureQueries(try await CairnClient.open(configuration), directory)
    }

    private func measureQueries(_ client: CairnClient, _ directory: URL) throws -> [String: JSONValue] {
        let raw = try DatabasePool(path: directory.appendingPathComponent("raw.sqlite").path)
        try raw.write { db in
            try db.execute(sql: """
                CREATE TABLE items (id TEXT PRIMARY KEY NOT NULL, code TEXT, count INTEGER, title TEXT, score REAL, cairn_data TEXT NOT NULL);
                CREATE INDEX items_code ON items (code); CREATE INDEX items_count ON items (count);
                CREATE TABLE notes (id TEXT PRIMARY KEY NOT NULL, title TEXT, body TEXT, cairn_data TEXT NOT NULL);
                CREATE VIRTUAL TABLE notes_fts USING fts5(title, body, content=notes, content_rowid=rowid, tokenize='unicode61 remove_diacritics 2');
                """)
        }

        let fill = ContinuousClock.now
        for start in stride(from: 0, to: records, by: 20_000) {
            try client.writeBatch { batch in
                for index in start..<min(start + 20_000, records) { try batch.save("items", id: "i-\(index)", data: Self.item(index)) }
            }
            try raw.write { db in
                let insert = try db.makeStatement(sql: "INSERT INTO items VALUES (?, ?, ?, ?, ?, ?)")
                for index in start..<min(start + 20_000, records) {
                    let item = Self.item(index)
                    try insert.execute(arguments: [
                        "i-\(index)", item["code"]?.stringValue, index, item["title"]?.stringValue, item["score"]?.numberValue,
                        JSONValue.object(item).jsonText(),
                    ])
                }
            }
        }
        try client.writeBatch { batch in
            for index in 0..<searchRecords { try batch.save("notes", id: "n-\(index)", data: Self.note(index)) }
        }
        try raw.write { db in
            let insert = try db.makeStatement(sql: "INSERT INTO notes VALUES (?, ?, ?, ?)")
            for index in 0..<searchRecords {
                let note = Self.note(index)
                try insert.execute(arguments: ["n-\(index)", note["title"]?.stringValue, note["body"]?.stringValue, JSONValue.object(note).jsonText()])
            }
            try db.execute(sql: "INSERT INTO notes_fts (notes_fts) VALUES ('rebuild')")
        }
        log(String(format: "filled %d items and %d searchable notes, each in Cairn and in raw GRDB, in %.1f s", records, searchRecords,
                   BenchTiming.seconds(since: fill)))

        let rounds = 200
        let key = { (round: Int) in (round &* 48_271) % records }
        let cairnEquality = try BenchTiming.medianMilliseconds(rounds) { round in
            let found = try client.records(Query("items").filter(.condition("code", .eq, .string("code-\(key(round))"))))
            guard found.count == 1 else { throw CLIError("the equality lookup found \(found.count) records") }
        }
        let rawEquality = try BenchTiming.medianMilliseconds(rounds) { round in
            let rows = try raw.read { db in try Row.fetchAll(db, sql: "SELECT * FROM items WHERE code = ?", arguments: ["code-\(key(round))"]) }
            guard rows.count == 1 else { throw CLIError("the raw lookup found \(rows.count) rows") }
        }
        log(String(format: "indexed equality over %d records: median %.3f ms (raw GRDB %.3f ms)", records, cairnEquality, rawEquality))

        let low = { (round: Int) in key(round) % max(records - 100, 1) }
        let cairnRange = try BenchTiming.medianMilliseconds(rounds) { round in
            let query = Query("items").filter(.and([.condition("count", .gte, .integer(Int64(low(round)))), .condition("count", .lt, .integer(Int64(low(round) + 100)))]))
            let found = try client.records(query.sorted(by: "count"))
            guard found.count == min(100, records) else { throw CLIError("the range query found \(found.count) records") }
        }
        let rawRange = try BenchTiming.medianMilliseconds(rounds) { round in
            let rows = try raw.read { db in
                try Row.fetchAll(db, sql: "SELECT * FROM items WHERE count >= ? AND count < ? ORDER BY count", arguments: [low(round), low(round) + 100])
            }
            guard rows.count == min(100, records) else { throw CLIError("the raw range query found \(rows.count) rows") }
        }
        log(String(format: "indexed range returning 100 records: median %.3f ms (raw GRDB %.3f ms)", cairnRange, rawRange))

        let searches = ["fire exit", "alarm", "w17 w18", "valve pump", "door", "w1999", "roof ladder", "exit"]
        let cairnSearch = try BenchTiming.medianMilliseconds(rounds) { round in
            _ = try client.records(Query("notes").matching(searches[round % searches.count]).limit(20))
        }
        let rawSearch = try BenchTiming.medianMilliseconds(rounds) { round in
            let words = searches[round % searches.count].split(separator: " ").map { "\"\($0)\"" }
            let match = (words.dropLast() + [words.last! + "*"]).joined(separator: " ")
            _ = try raw.read { db in
                try Row.fetchAll(db, sql: """
                    SELECT notes.* FROM notes JOIN notes_fts ON notes_fts.rowid = notes.rowid
                    WHERE notes_fts MATCH ? ORDER BY notes_fts.rank LIMIT 20
                    """, arguments: [match])
            }
        }
        log(String(format: "full-text search over %d records, best 20: median %.3f ms (raw GRDB %.3f ms)", searchRecords, cairnSearch, rawSearch))
        try raw.close()
        return [
            "indexedEqualityMilliseconds": .number(BenchTiming.rounded(cairnEquality)), "rawIndexedEqualityMilliseconds": .number(BenchTiming.rounded(rawEquality)),
            "indexedRangeMilliseconds": .number(BenchTiming.rounded(cairnRange)), "rawIndexedRangeMilliseconds": .number(BenchTiming.rounded(rawRange)),
            "fullTextMilliseconds": .number(BenchTiming.rounded(cairnSearch)), "rawFullTextMilliseconds": .number(BenchTiming.rounded(rawSearch)),
        ]
    }

    // MARK: JSON caches

    /// One entry as a product API might answer it.
    static func entry(_ index: Int) -> JSONValue {
        var object: [String: JSONValue] = [:]
        object["id"] = .string("e-\(index)")
        object["sku"] = .string("SKU-\(index)")
        object["price"] = .number(Double(index % 5000) / 10)
        object["active"] = .bool(index % 3 == 0)
        object["updated"] = .string("2026-11-23T10:00:00Z")
        object["description"] = .string("A product from the catalogue API, entry \(index), with some text to carry.")
        object["dimensions"] = .object(["w": .integer(10), "h": .integer(20), "d": .integer(Int64(index % 50))])
        return .object(object)
    }

    private func measureCache(_ directory: URL) throws -> [String: JSONValue] {
        let entries: [JSONValue] = (0..<cacheEntries).map(Self.entry)
        let caches = try JSONCaches(location: .file(directory.appendingPathComponent("caches.sqlite").path))
        let cache = try caches.cache(name: "products", fields: [.string("sku"), .number("price"), .boolean("active"), .datetime("updated")])
        let start = ContinuousClock.now
        try cache.cache(entries)
        let cairnRate = Double(cacheEntries) / BenchTiming.seconds(since: start)

        // Raw GRDB: the same rows into a table of the same shape, in one transaction, from the same JSON values.
        let raw = try DatabasePool(path: directory.appendingPathComponent("raw-cache.sqlite").path)
        try raw.write { db in try db.execute(sql: "CREATE TABLE products (id TEXT PRIMARY KEY NOT NULL, json TEXT NOT NULL, sku TEXT, price REAL, active INTEGER, updated TEXT)") }
        let rawStart = ContinuousClock.now
        try raw.write { db in
            let insert = try db.makeStatement(sql: "INSERT INTO products VALUES (?, ?, ?, ?, ?, ?)")
            for entry in entries {
                let object = entry.objectValue ?? [:]
                try insert.execute(arguments: [
                    object["id"]?.stringValue, entry.jsonText(), object["sku"]?.stringValue, object["price"]?.numberValue,
                    object["active"]?.boolValue, object["updated"]?.stringValue,
                ])
            }
        }
        let rawRate = Double(cacheEntries) / BenchTiming.seconds(since: rawStart)
        try raw.close()
        log(String(format: "cached %d JSON entries: %.0f entries/s (raw GRDB %.0f rows/s, %.2f×)", cacheEntries, cairnRate, rawRate, cairnRate / rawRate))
        return [
            "cacheEntriesPerSecond": .number(cairnRate.rounded()), "rawCacheRowsPerSecond": .number(rawRate.rounded()),
            "cacheToRawInsert": .number(BenchTiming.rounded(cairnRate / rawRate)),
        ]
    }
}
