import CairnProtocol
@testable import CairnServer
import CairnTesting
import Foundation
import Synchronization
import Testing

/// Webhooks: every committed change of their collections delivered at least once, in feed order, signed; through a
/// receiver that fails, hangs or is down, and across purges.
@Suite("Webhooks", .timeLimit(.minutes(20)))
struct WebhookTests {
    static let secret = "a-webhook-secret-of-some-length"

    /// What a receiver does with a post instead of accepting it.
    enum Refusal: Sendable {
        /// Answers this.
        case answer(StubHTTPServer.Reply)
        /// Answers 200 only after `delay` (past the server's timeout: not accepted).
        case hang(Duration)
    }

    /// What a receiver accepted: each delivered change, checked as it comes.
    final class Deliveries: Sendable {
        let accepted = Mutex<[WebhookDelivery]>([])
        let problems = Mutex<[String]>([])
        /// How to treat post number N (from 1); nil accepts it.
        let refusal = Mutex<(@Sendable (Int) -> Refusal?)?>(nil)
        let posts = Atomic<Int>(0)

        var versions: [Int64] { accepted.withLock { $0.map(\.version) } }

        /// Checks a post's signature and shape, then accepts it (or refuses it as told).
        func receive(_ request: StubHTTPServer.Request) async throws -> StubHTTPServer.Reply {
            let number = posts.add(1, ordering: .relaxed).newValue
            switch refusal.withLock({ $0 })?(number) {
            case .answer(let reply)?: return reply
            case .hang(let delay)?:
                try await Task.sleep(for: delay)
                return .text("too late", status: 200)
            case nil: break
            }
            guard let signature = request.header("Cairn-Signature"), DeliverySignature.isValid(signature, for: request.body, secret: WebhookTests.secret)
            else {
                problems.withLock { $0.append("bad signature on post \(number)") }
                return .text("bad signature", status: 401)
            }
            guard request.header("Cairn-Delivery") != nil, let body = try? CairnJSON.decode(WebhookDeliveryBody.self, from: request.body) else {
                problems.withLock { $0.append("bad body on post \(number)") }
                return .text("bad body", status: 400)
            }
            if body.deliveries.count > 100 || body.deliveries.isEmpty { problems.withLock { $0.append("\(body.deliveries.count) deliveries") } }
            accepted.withLock { $0 += body.deliveries }
            return .json(["ok": true])
        }
    }

    /// A fixture whose webhooks retry fast, with a receiver.
    static func withReceiver(
        clock: any WallClock = SystemWallClock(), configure: @escaping (inout ServerConfiguration) -> Void = { _ in },
        _ body: (Fixture, StubHTTPServer, Deliveries) async throws -> Void
    ) async throws {
        let fixture = try await Fixture.start(clock: clock) { configuration in
            configuration.webhooks.retryBase = 0.02
            configuration.webhooks.retryCap = 0.2
            configuration.webhooks.pollInterval = 0.2
            // A refused connection is retried by the HTTP client until the timeout: keep a down receiver's attempts short.
            configuration.webhooks.timeout = 2
            configure(&configuration)
        }
        try await withCleanup({ await fixture.stop() }) {
            let deliveries = Deliveries()
            try await StubHTTPServer.withServer({ try await deliveries.receive($0) }) { receiver in
                try await body(fixture, receiver, deliveries)
            }
        }
    }

    static func push(_ fixture: Fixture, _ collection: String, count: Int, from start: Int = 0) async throws -> [Int64] {
        var versions: [Int64] = []
        for chunk in stride(from: start, to: start + count, by: 50) {
            let operations = (chunk..<min(chunk + 50, start + count)).map { index in
                SyncOperation(opId: newOpID(), collection: collection, id: "\(collection)-\(index)", op: .create, data: ["title": .string("#\(index)")])
            }
            versions += try await fixture.push("alice", operations).compactMap { $0.record?.version }
        }
        return versions
    }

    @Test("every change of its collections reaches the receiver once, in feed order, signed, in posts of at most 100; status counts them")
    func deliversInOrder() async throws {
        // No post times out, however busy the machine: a timed-out post is sent again (at least once), which would
        // show here as a repeat.
        try await Self.withReceiver(configure: { $0.webhooks.timeout = 3600 }) { fixture, receiver, deliveries in
            let admin = fixture.server.server.admin
            _ = try await Self.push(fixture, "tasks", count: 3)   // before the webhook: not delivered
            try await admin.addWebhook(NewWebhookRequest(name: "erp", url: receiver.url("/hook"), collections: ["tasks"], secret: Self.secret), project: "field")
            var expected = try await Self.push(fixture, "tasks", count: 230, from: 3)
            _ = try await Self.push(fixture, "notes", count: 20)   // another collection: skipped
            let deleted = try await fixture.push("bob", [SyncOperation(opId: newOpID(), collection: "tasks", id: "tasks-5", op: .delete, baseVersion: expected[2])])
            expected.append(try #require(deleted.first?.record?.version))
            try await waitUntil { deliveries.versions.count >= expected.count }
            #expect(deliveries.versions == expected)
            #expect(deliveries.problems.withLock { $0 }.isEmpty)
            let last = try #require(deliveries.accepted.withLock { $0.last })
            #expect(last.op == "delete" && (last.data ?? .null) == .null && last.id == "tasks-5" && last.updatedBy == "bob" && last.deliveryId == "erp:\(last.version)")
            let first = try #require(deliveries.accepted.withLock { $0.first })
            #expect(first.op == "upsert" && first.data?.objectValue?["title"] == "#3" && first.collection == "tasks" && first.updatedBy == "alice")
            try await waitUntil { try await admin.webhooks(project: "field").first?.delivered == Int64(expected.count) }
            let status = try #require(try await admin.webhooks(project: "field").first)
            #expect(status.status == "ok" && status.failures == 0 && status.lastSuccessAt != nil)
        }
    }

    @Test("a receiver answering 500, then hanging past the timeout, then accepting: nothing is skipped, and the failures are reported meanwhile")
    func failingReceiver() async throws {
        try await Self.withReceiver(configure: { $0.webhooks.timeout = 0.3 }) { fixture, receiver, deliveries in
            let admin = fixture.server.server.admin
            deliveries.refusal.withLock {
                $0 = { number in
                    switch number {
                    case 1...3: .answer(.text("down for maintenance", status: 500))
                    case 4...5: .hang(.seconds(2))
                    default: nil
                    }
                }
            }
            try await admin.addWebhook(NewWebhookRequest(name: "erp", url: receiver.url("/hook"), secret: Self.secret), project: "field")
            let expected = try await Self.push(fixture, "logs", count: 120)
            try await waitUntil { try await admin.webhooks(project: "field").first?.failures ?? 0 >= 2 }
            let failing = try #require(try await admin.webhooks(project: "field").first)
            #expect(failing.status == "retrying" && failing.lastError != nil && failing.failingSince != nil && failing.cursor < expected.last!)
            try await waitUntil { Set(deliveries.versions).count >= expected.count }
            // At least once, in order: any repeat is a whole batch again, never a change out of order.
            var seen = Set<Int64>()
            let firstTimes = deliveries.versions.filter { seen.insert($0).inserted }
            #expect(firstTimes == expected)
            try await waitUntil { try await admin.webhooks(project: "field").first?.failures == 0 }
            #expect(try await admin.webhooks(project: "field").first?.status == "ok")
        }
    }

    @Test("a receiver that is down (connection refused) gets everything once it listens again; a day of failures marks the webhook failing")
    func receiverDown() async throws {
        let clock = ManualWallClock()
        try await Self.withReceiver(clock: clock) { fixture, _, _ in
            let admin = fixture.server.server.admin
            let port = try closedLoopbackPort()
            try await admin.addWebhook(NewWebhookRequest(name: "erp", url: "http://127.0.0.1:\(port)/hook", secret: Self.secret), project: "field")
            let expected = try await Self.push(fixture, "tasks", count: 40)
            try await waitUntil { try await admin.webhooks(project: "field").first?.failures ?? 0 >= 2 }
            #expect(try await admin.webhooks(project: "field").first?.status == "retrying")
            clock.advance(by: 24 * 3600 + 1)
            let failing = try #require(try await admin.webhooks(project: "field").first)
            #expect(failing.status == "failing" && failing.cursor < expected.last! && failing.lastError?.contains("could not be reached") == true)
            try await waitUntil {
                String(decoding: try await fixture.http.send(.GET, "/metrics").body, as: UTF8.self).contains("cairn_webhooks_failing 1")
            }
            // The receiver comes up on that port: every change arrives, in order.
            let deliveries = Deliveries()
            let receiver = StubHTTPServer({ try await deliveries.receive($0) })
            try await receiver.start(port: port)
            try await withCleanup({ await receiver.stop() }) {
                try await waitUntil { deliveries.versions.count >= expected.count }
                #expect(deliveries.versions == expected)
                try await waitUntil { try await admin.webhooks(project: "field").first?.status == "ok" }
            }
        }
    }

    @Test("a purge keeps the tombstones a webhook has not delivered, however old")
    func purgeHoldsTombstones() async throws {
        let clock = ManualWallClock()
        try await Self.withReceiver(clock: clock, configure: {
            $0.tombstoneRetention = 60
            $0.webhooks.timeout = 3600
        }) { fixture, receiver, deliveries in
            let admin = fixture.server.server.admin
            deliveries.refusal.withLock { $0 = { _ in .answer(.text("not yet", status: 503)) } }
            try await admin.addWebhook(NewWebhookRequest(name: "erp", url: receiver.url("/hook"), collections: ["tasks"], secret: Self.secret), project: "field")
            let made = try await Self.push(fixture, "tasks", count: 1)
            let deleted = try await fixture.push("alice", [SyncOperation(opId: newOpID(), collection: "tasks", id: "tasks-0", op: .delete, baseVersion: made[0])])
            _ = made
            clock.advance(by: 3 * 3600)
            #expect(try await fixture.server.server.purgeNow().tombstones == 0)
            deliveries.refusal.withLock { $0 = nil }
            try await waitUntil { deliveries.versions.count >= 1 }
            #expect(deliveries.versions == [try #require(deleted.first?.record?.version)])
            #expect(deliveries.accepted.withLock { $0.last?.op } == "delete")
            // Once delivered, the tombstone is no longer held.
            try await waitUntil { try await admin.webhooks(project: "field").first?.behind == 0 }
            #expect(try await fixture.server.server.purgeNow().tombstones == 1)
        }
    }

    @Test("pushes go on while the receiver hangs: a batch never waits for a delivery")
    func writesDoNotWait() async throws {
        try await Self.withReceiver(configure: { $0.webhooks.timeout = 3600 }) { fixture, receiver, deliveries in
            let admin = fixture.server.server.admin
            let hanging = AsyncStream<Void>.makeStream()
            receiver.answer { _ in
                for await _ in hanging.stream {}
                return .json([:])
            }
            try await withCleanup({ hanging.continuation.finish() }) {
                try await admin.addWebhook(NewWebhookRequest(name: "erp", url: receiver.url("/hook"), secret: Self.secret), project: "field")
                _ = try await Self.push(fixture, "tasks", count: 1)
                try await waitUntil { receiver.requests.count >= 1 }
                // The receiver holds the first delivery open; a hundred more writes commit all the same.
                let versions = try await Self.push(fixture, "tasks", count: 100, from: 1)
                #expect(versions.count == 100)
                #expect(try await admin.webhooks(project: "field").first?.delivered == 0)
            }
            _ = deliveries
        }
    }
}
