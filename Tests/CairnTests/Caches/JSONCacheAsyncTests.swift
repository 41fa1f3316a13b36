import CairnProtocol
import CairnTesting
import Dispatch
import Foundation
import Synchronization
import Testing

@testable import Cairn

@Suite("Caches: the asynchronous calls", .timeLimit(.minutes(20)))
struct JSONCacheAsyncTests {
    final class StartCount: Sendable {
        let count = Mutex(0)
    }

    @Test("every async call does what its synchronous twin does")
    func sameResults() async throws {
        let caches = try await JSONCaches.open(location: .inMemory)
        let products = try await caches.openCache(name: "products", fields: JSONCacheTests.fields)
        let body = Data(#"[{"id": "p-1", "sku": "A-1", "price": 9.5}, {"id": 2, "sku": "b-2", "price": 20}]"#.utf8)
        #expect(try await products.async.cache(jsonArray: body) == 2)
        #expect(try await products.async.cache([JSONCacheTests.product("p-3", sku: "C-3", price: 4)]) == 1)
        #expect(try await products.async.entry(id: "2")?["sku"] == "b-2")
        #expect(try await products.async.count() == 3)
        let cheap = try await products.async.entries(where: .condition("price", .lt, 12), sortedBy: [.init("price")])
        #expect(cheap.map { $0["id"] } == ["p-3", "p-1"])
        #expect(try await products.async.entries(where: .condition("price", .lt, 12)) == (try products.entries(where: .condition("price", .lt, 12))))
        try await products.async.reindex(fields: [.string("sku")])
        #expect(products.fields == [.string("sku")])
        await #expect(throws: CairnError.self) { try await products.async.count(where: .condition("price", .lt, 12)) }
        try await products.async.remove(ids: ["p-1"])
        #expect(try await products.async.count() == 2)
        try await products.async.removeAll()
        #expect(try await products.async.count() == 0)
        // The same errors as the synchronous calls.
        let error = await #expect(throws: CairnError.self) { try await products.async.cache(["just text"]) }
        #expect(error?.code == .invalidArgument)
    }

    @Test("calls waiting for the store's writer hold no thread of Swift's concurrency pool; they complete once it is free")
    func noThreadHeld() async throws {
        let caches = try JSONCaches(location: .inMemory)
        let products = try caches.cache(name: "products", fields: JSONCacheTests.fields)
        // Another thread holds the store's writer until told to let go.
        let release = DispatchSemaphore(value: 0)
        let holding = DispatchSemaphore(value: 0)
        DispatchQueue(label: "holder").async {
            try? caches.writer.write { _ in
                holding.signal()
                release.wait()
            }
        }
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { holding.wait(); continuation.resume() }
        }
        // More calls than the pool has threads. Had each blocked its thread waiting for the writer, the pool would be
        // full and nothing below could run: the test would hang until the suite's time limit.
        let calls = ProcessInfo.processInfo.activeProcessorCount + 2
        let started = StartCount()
        let written = (0..<calls).map { index in
            Task {
                started.count.withLock { $0 += 1 }
                return try await products.async.cache([JSONCacheTests.product(.string("p-\(index)"), sku: "A", price: 1)])
            }
        }
        try await waitUntil { started.count.withLock { $0 } == calls }
        try await Task.sleep(for: .milliseconds(50))
        #expect(await Task { 1 + 1 }.value == 2)
        release.signal()
        var total = 0
        for call in written { total += try await call.value }
        #expect(total == calls)
        #expect(try products.count() == calls)
    }

    @Test("a client's cache opened asynchronously is the same cache as the synchronous one")
    func clientCache() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let alice = try await fixture.client("alice")
            let contacts = try await alice.openJSONCache(name: "contacts", fields: [.string("email")])
            try await contacts.async.cache([["id": "c-1", "email": "ana@example.com"]])
            #expect(contacts.scope.hasSuffix("#\(Fixture.project)"))
            #expect(try alice.jsonCache(name: "contacts", fields: [.string("email")]).count(where: .condition("email", .eq, "ana@example.com")) == 1)
        }
    }
}
