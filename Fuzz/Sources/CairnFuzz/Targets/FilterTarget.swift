import CairnProtocol
import CairnSQL
import Foundation
import GRDB

/// `filter`: the filter language. A filter that decodes encodes to text that decodes and encodes to the same text,
/// and selects the same records; a filter that compiles to
/// SQL selects, from an in-memory SQLite table of fixed records (read as the server reads them, out of the record's
/// JSON), exactly the records the plain Swift evaluator (Tests/CairnTests/Queries/FilterReferenceEvaluator.swift)
/// selects.
enum FilterTarget {
    static let schema = CollectionSchema(name: "notes", fields: [
        FieldSchema(name: "title", type: .string), FieldSchema(name: "done", type: .boolean), FieldSchema(name: "due", type: .datetime),
        FieldSchema(name: "count", type: .integer), FieldSchema(name: "score", type: .number), FieldSchema(name: "tags", type: .json),
    ])

    static let records: [String: [String: JSONValue]] = [
        "r-0": [:],
        "r-1": ["title": "buy milk", "done": false, "due": "2026-11-23T10:00:00Z", "count": 2, "score": 0.5, "tags": ["home", 1, true]],
        "r-2": ["title": "Buy MILK", "done": true, "due": "2026-11-23T12:00:00+02:00", "count": -1, "score": 2, "tags": []],
        "r-3": ["title": "café", "due": "2026-11-23t09:30:00.250-00:30", "count": 0, "score": 2.5, "tags": "home"],
        "r-4": ["title": "a%b_c", "done": true, "due": "2025-01-01T00:00:00.5Z", "count": 4, "score": -1.25, "tags": [2.5, "x", false]],
        "r-5": ["title": "", "due": "2026-11-23 10:00:01Z", "count": 3, "tags": [["nested"], ["k": "v"]]],
        "r-6": ["title": "日本😀", "done": false, "count": 123_456_789_012, "score": 1e300, "tags": 7],
        "r-7": ["title": "Z", "due": "1999-12-31T23:59:60Z", "score": 0, "tags": ["a": 1]],
        "r-8": ["title": "1", "done": true, "due": "2026-11-24T00:00:00+23:59", "count": 1, "score": 1, "tags": [1]],
        "r-9": ["title": "true", "count": 2, "score": 2.0, "tags": [true, "true", 1.0]],
    ]

    static let database: DatabaseQueue = {
        do {
            var configuration = Configuration()
            configuration.prepareDatabase { SQLiteFunctions.register($0) }
            let queue = try DatabaseQueue(configuration: configuration)
            try queue.write { db in
                try db.execute(sql: "CREATE TABLE records (id TEXT PRIMARY KEY, data TEXT NOT NULL)")
                for (id, data) in records {
                    try db.execute(sql: "INSERT INTO records (id, data) VALUES (?, ?)", arguments: [id, JSONValue.object(data).jsonText()])
                }
            }
            return queue
        } catch {
            fatalError("the records table cannot be made: \(error)")
        }
    }()

    static func run(_ bytes: [UInt8]) {
        guard let filter = try? CairnJSON.decode(Filter.self, from: bytes) else { return }
        guard let encoded = try? CairnJSON.encode(filter) else { return require(false, "a decoded filter does not encode: \(show(bytes))") }
        // Foundation's JSONEncoder writes 2.0 as 2: the text is a fixpoint from the first encoding on, and the filter
        // read back selects the same records.
        guard let decoded = try? CairnJSON.decode(Filter.self, from: encoded) else { return require(false, "\(show(encoded)) does not decode") }
        require((try? CairnJSON.encode(decoded)) == encoded, "\(show(bytes)) encodes as \(show(encoded)), which decodes to another filter")
        // The evaluator knows declared fields and id, not paths inside json fields.
        let isDeclared = names(filter).allSatisfy { $0 == "id" || schema.field(named: $0) != nil }
        for (id, data) in records where isDeclared {
            require(FilterEvaluator.matches(filter, id: id, data: data, schema: schema) == FilterEvaluator.matches(decoded, id: id, data: data, schema: schema),
                    "\(show(bytes)) and its encoding \(show(encoded)) select different records")
        }
        guard let compiled = try? FilterSQL.compile(filter, collection: schema, dialect: .sqlite, fieldExpression: { field in
            SQLiteDialect().jsonMember(field.name, of: "data")
        }), isDeclared else { return }
        let selected: Set<String>
        do {
            selected = try database.read { db in
                Set(try String.fetchAll(
                    db, sql: "SELECT id FROM records WHERE \(compiled.sql)",
                    arguments: StatementArguments(compiled.arguments.map(\.databaseValue))))
            }
        } catch {
            return require(false, "compiled SQL of \(show(encoded)) fails: \(error)")
        }
        let expected = Set(records.filter { FilterEvaluator.matches(filter, id: $0.key, data: $0.value, schema: schema) }.keys)
        require(selected == expected, "\(show(encoded)): SQL selects \(selected.sorted()), the evaluator \(expected.sorted())")
    }

    static func names(_ filter: Filter) -> [String] {
        switch filter {
        case .and(let filters), .or(let filters): filters.flatMap(names)
        case .not(let inner): names(inner)
        case .condition(let field, _, _): [field]
        }
    }
}
