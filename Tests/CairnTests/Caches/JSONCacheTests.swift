import CairnProtocol
import Foundation
import Testing

@testable import Cairn

@Suite("Caches: named JSON caches with searchable fields")
struct JSONCacheTests {
    static let fields: [CacheField] = [.string("sku"), .number("price"), .boolean("active"), .datetime("seen")]

    static func product(_ id: JSONValue, sku: String, price: JSONValue, active: Bool = true, seen: String = "2026-11-23T10:00:00Z") -> JSONValue {
        .object(["id": id, "sku": .string(sku), "price": price, "active": .bool(active), "seen": .string(seen), "extra": ["nested": [1, 2]]])
    }

    static func temporaryPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("cairn-caches-\(UUID().uuidString)/caches.sqlite").path
    }

    @Test("entries are upserted by id, read whole, filtered and sorted by declared fields, counted and removed")
    func upsertAndQuery() throws {
        let caches = try JSONCaches(location: .inMemory)
        let products = try caches.cache(name: "products", fields: Self.fields)
        #expect(try products.cache([
            Self.product("p-1", sku: "A-1", price: 9.5), Self.product(2, sku: "b-2", price: 20),
            Self.product("p-3", sku: "C-3", price: 4, active: false, seen: "2026-11-23T12:30:00+02:00"),
        ]) == 3)
        #expect(try products.entry(id: "2")?["sku"] == "b-2")
        #expect(try products.entry(id: "p-1")?["extra"] == ["nested": [1, 2]])
        // Upsert by id replaces the entry and its searchable fields.
        try products.cache([Self.product("p-1", sku: "A-1", price: 11)])
        #expect(try products.count() == 3)
        #expect(try products.entry(id: "p-1")?["price"] == 11)
        let cheap = try products.entries(where: .condition("price", .lt, 12), sortedBy: [.init("price", ascending: false)])
        #expect(cheap.map { $0["id"] } == ["p-1", "p-3"])
        #expect(try products.entries(where: .condition("sku", .like, "b%")).map { $0["id"] } == [.integer(2)])
        #expect(try products.count(where: .condition("active", .eq, true)) == 2)
        // Datetimes compare by instant: 12:30+02:00 is 10:30Z.
        #expect(try products.count(where: .condition("seen", .gt, "2026-11-23T10:15:00Z")) == 1)
        #expect(try products.entries(sortedBy: [.init("sku")], limit: 1, offset: 1).map { $0["sku"] } == ["C-3"])
        try products.remove(ids: ["p-3", "missing"])
        #expect(try products.count() == 2)
        try products.removeAll()
        #expect(try products.count() == 0)
    }

    @Test("an entry without an id, or not an object, is an error that names it, and nothing is cached")
    func missingID() throws {
        let products = try JSONCaches(location: .inMemory).cache(name: "products", fields: Self.fields)
        let error = #expect(throws: CairnError.self) {
            try products.cache([Self.product("p-1", sku: "A", price: 1), ["sku": "no-id", "price": 2]])
        }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains("entry 1") == true)
        #expect(error?.message.contains("sku") == true)
        expectError(.invalidArgument) { try products.cache(["just text"]) }
        #expect(try products.count() == 0)
    }

    @Test("filters and sorting on undeclared fields are clear errors; bad declarations are refused")
    func undeclaredFields() throws {
        let products = try JSONCaches(location: .inMemory).cache(name: "products", fields: Self.fields)
        try products.cache([Self.product("p-1", sku: "A", price: 1)])
        let error = #expect(throws: CairnError.self) { _ = try products.entries(where: .condition("extra", .eq, 1)) }
        #expect(error?.code == .validationFailed)
        #expect(error?.message.contains("\"extra\"") == true)
        #expect(error?.message.contains("declared") == true)
        expectError(.validationFailed) { _ = try products.entries(sortedBy: [.init("extra")]) }
        expectError(.validationFailed) { _ = try products.entries(where: .condition("price", .eq, "cheap")) }
        let caches = try JSONCaches(location: .inMemory)
        expectError(.invalidArgument) { _ = try caches.cache(name: "x", fields: [CacheField("data", .json)]) }
        expectError(.invalidArgument) { _ = try caches.cache(name: "x", fields: [.string("a"), .integer("a")]) }
        expectError(.invalidArgument) { _ = try caches.cache(name: "x", fields: [.string("id")]) }
    }

    @Test("a value of another type than declared is kept but not found by that field")
    func mismatchedValues() throws {
        let products = try JSONCaches(location: .inMemory).cache(name: "products", fields: Self.fields)
        try products.cache([Self.product("p-1", sku: "A", price: "12 EUR"), Self.product("p-2", sku: "B", price: 3)])
        #expect(try products.count(where: .condition("price", .exists, true)) == 1)
        #expect(try products.entry(id: "p-1")?["price"] == "12 EUR")
    }

    @Test("reindex rebuilds the searchable fields of cached entries; reopening with other fields does too")
    func reindex() throws {
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        do {
            let products = try JSONCaches(location: .file(path)).cache(name: "products", fields: [.string("sku")])
            try products.cache([Self.product("p-1", sku: "A", price: 5), Self.product("p-2", sku: "B", price: 50)])
            expectError(.validationFailed) { _ = try products.count(where: .condition("price", .gt, 10)) }
            try products.reindex(fields: [.string("sku"), .number("price")])
            #expect(try products.count(where: .condition("price", .gt, 10)) == 1)
            #expect(products.fields.map(\.name) == ["sku", "price"])
        }
        // Persisted: a reopen sees the entries; other fields rebuild the columns.
        let reopened = try JSONCaches(location: .file(path)).cache(name: "products", fields: [.boolean("active")])
        #expect(try reopened.count() == 2)
        #expect(try reopened.count(where: .condition("active", .eq, true)) == 2)
        expectError(.validationFailed) { _ = try reopened.count(where: .condition("price", .gt, 10)) }
    }

    @Test("caches of different scopes, or names, never see each other's entries")
    func scoping() throws {
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let serverA = try JSONCaches(location: .file(path), scope: "https://a.example#field").cache(name: "products", fields: Self.fields)
        let serverB = try JSONCaches(location: .file(path), scope: "https://b.example#field").cache(name: "products", fields: Self.fields)
        let other = try JSONCaches(location: .file(path), scope: "https://a.example#field").cache(name: "prices", fields: Self.fields)
        try serverA.cache([Self.product("p-1", sku: "A", price: 1)])
        try serverB.cache([Self.product("p-2", sku: "B", price: 2)])
        #expect(try serverA.entries().map { $0["id"] } == ["p-1"])
        #expect(try serverB.entries().map { $0["id"] } == ["p-2"])
        #expect(try other.count() == 0)
        try serverB.removeAll()
        #expect(try serverA.count() == 1)
    }
}
