import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Synchronization
import Testing

@testable import Cairn

/// Devices whose clocks are wrong: the server's clock decides what must be decided (token expiry, file links), and
/// nothing the device computes from its own clock goes negative or waits for the clock to catch up.
@Suite("Wrong clocks on the device are harmless", .timeLimit(.minutes(20)))
struct WrongClockTests {
    static let hour: TimeInterval = 3600
    static let day: TimeInterval = 86_400

    @Test("a device hours ahead, days behind or a month ahead signs in, syncs both ways, renews its expired token, moves a file and estimates",
          arguments: [5 * hour, -3 * day, 30 * day])
    func skewedDevice(offset: TimeInterval) async throws {
        let server = ManualWallClock(Date())
        let fixture = try await Fixture.start(clock: server)
        try await withCleanup({ await fixture.stop() }) {
            let device = SkewedWallClock(following: server, offset: offset)
            let alice = try await fixture.client("alice") { $0.wallClock = device }
            let bob = try await fixture.client("bob")
            try alice.create("notes", id: "a1", data: ["title": "from a wrong clock"])
            #expect(try await alice.sync().pushed == 1)
            try await bob.sync()
            #expect(try bob.record("notes", id: "a1")?.data["title"] == "from a wrong clock")
            try bob.create("notes", id: "b1", data: ["title": "from the right clock"])
            try await bob.sync()
            try await alice.sync()
            #expect(try alice.record("notes", id: "b1") != nil)

            // Twenty minutes later on both clocks the access token (15 minutes) has expired: the device renews it.
            server.advance(by: 20 * 60)
            try alice.create("notes", id: "a2", data: ["title": "after the token expired"])
            #expect(try await alice.sync().pushed == 1)
            // The server's clock alone moves on (the device's clock runs slow): the server refuses the old token,
            // and the device signs in again by itself.
            device.offset -= 20 * 60
            server.advance(by: 20 * 60)
            try alice.create("notes", id: "a3", data: ["title": "with a slow clock"])
            #expect(try await alice.sync().pushed == 1)
            #expect(try alice.failedOperations().isEmpty)

            // A file: the server's links and expiries are its own; the device uploads and another device downloads.
            let localID = try alice.files.upload(data: Data("site photo".utf8), name: "site.txt")
            try await alice.sync()
            await alice.files.waitForUploads()
            let serverID = try #require(try alice.files.upload(localID)?.serverID)
            #expect(try await bob.files.data(for: serverID) == Data("site photo".utf8))

            let estimate = try await alice.estimateDownload()
            #expect(estimate.timeNeeded.map { $0 >= .zero } ?? true)
            let report = try await alice.diagnostics()
            #expect(report.verdict == .upToDate, "\(report.explanation)")
            Self.expectNoNegativeAges(report)
            for run in try alice.history() { #expect((run.duration ?? 0) >= 0) }
        }
    }

    @Test("a device whose clock is off signs in with an identity provider's tokens, which the server judges by its own clock",
          arguments: [5 * hour, -3 * day])
    func identityProviderTokens(offset: TimeInterval) async throws {
        let server = ManualWallClock(Date())
        let provider = try TestIdentityProvider()
        let jwks = TestScratch.url("jwks", suffix: ".json")
        defer { try? FileManager.default.removeItem(at: jwks) }
        try provider.jwks().write(to: jwks)
        let fixture = try await Fixture.start(clock: server) {
            $0.identityProvider = IdentityProviderConfiguration(
                jwks: jwks.path, issuer: TestIdentityProvider.issuer, audience: TestIdentityProvider.audience)
        }
        try await withCleanup({ await fixture.stop() }) {
            let asked = Mutex(0)
            // The provider's clock is right (it is the server's); the device's is not.
            let zoe = try await fixture.client("zoe") {
                $0.wallClock = SkewedWallClock(following: server, offset: offset)
                $0.credentials = .token(user: "zoe") {
                    asked.withLock { $0 += 1 }
                    return try TestIdentityProvider.token(
                        TestIdentityProvider.claims("zoe", now: server.now(), ["cairn": ["projects": .object([Fixture.project: "writer"])]]),
                        key: provider.ec)
                }
            }
            try zoe.create("notes", id: "z1", data: ["title": "signed in by a provider"])
            #expect(try await zoe.sync().pushed == 1)
            // An hour later the provider's token and the session have expired: a new token is asked for.
            let before = asked.withLock { $0 }
            server.advance(by: Self.hour)
            try zoe.create("notes", id: "z2", data: ["title": "an hour later"])
            #expect(try await zoe.sync().pushed == 1)
            #expect(asked.withLock { $0 } > before)
            #expect(try zoe.failedOperations().isEmpty)
        }
    }

    @Test("a clock set back three days after syncing gives ages of zero, never negative, and a sync history without negative durations")
    func clockSetBack() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let device = SkewedWallClock(offset: 0)
            let alice = try await fixture.client("alice") { $0.wallClock = device }
            try alice.create("notes", id: "n1", data: ["title": "synced"])
            try await alice.sync()
            try alice.create("notes", id: "n2", data: ["title": "waiting"])
            // The user (or the network's time service) sets the clock back three days.
            device.offset = -3 * Self.day
            let report = try await alice.diagnostics()
            Self.expectNoNegativeAges(report)
            #expect(report.oldestPendingAgeSeconds == 0)
            #expect(report.collections.compactMap(\.lastPullAgeSeconds).allSatisfy { $0 == 0 })
            #expect(try await alice.sync().pushed == 1)
            for run in try alice.history() { #expect((run.duration ?? 0) >= 0) }
        }
    }

    @Test("a file upload that failed offline is tried at once when the clock was set back meanwhile, not days later")
    func fileRetryAfterClockSetBack() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let device = SkewedWallClock(offset: 0)
            let network = SwitchableTransport()
            let alice = try await fixture.client("alice", network: network) {
                $0.wallClock = device
                // A retry planned 10 to 30 seconds ahead: far enough that the uploader does not wait for it. One attempt
                // per request: the offline failure reaches the uploader at once.
                $0.retry = RetryPolicy(initialDelay: .seconds(20), maximumDelay: .seconds(40), maximumAttempts: 1)
            }
            network.isOnline = false
            let localID = try alice.files.upload(data: Data("offline photo".utf8), name: "offline.txt")
            await alice.files.waitForUploads()
            let waiting = try #require(try alice.files.upload(localID))
            #expect(waiting.state == .queued && waiting.attempts >= 1)

            device.offset = -3 * Self.day
            network.isOnline = true
            try await alice.sync()
            await alice.files.waitForUploads()
            #expect(try alice.files.upload(localID)?.state == .completed)
        }
    }

    @Test("the scheduler's backoff waits on the monotonic clock: a device clock days behind or a month ahead neither stalls nor hurries it, and its next wake never lies in the past")
    func schedulerBackoff() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let clock = ManualClock()
            // The device's clock stands still (a manual clock, offset), so every date below is exact.
            let device = SkewedWallClock(following: ManualWallClock(Date()), offset: -3 * Self.day)
            let network = SwitchableTransport()
            let alice = try await fixture.client("alice", network: network) {
                $0.clock = clock
                $0.wallClock = device
                $0.scheduling = SchedulingPolicy(pushDelay: .seconds(2), interval: .seconds(900))
                $0.retry = RetryPolicy(initialDelay: .seconds(10), maximumDelay: .seconds(60), maximumAttempts: 1)
            }
            network.isOnline = false
            try alice.create("notes", id: "n1", data: ["title": "written offline"])
            let run = Task { await alice.run() }
            defer { run.cancel() }
            // The first sync fails offline: the scheduler backs off, its next wake ahead of the device's clock.
            try await waitUntil { await alice.status().scheduler.phase == .retrying }
            let wake = try #require(await alice.status().scheduler.nextWake)
            #expect(wake.timeIntervalSince(device.now()) >= 0 && wake.timeIntervalSince(device.now()) <= 61)
            // The device's clock jumps a month ahead: the wake moves with it, still within the backoff ahead of it (the
            // backoff is on the scheduler's clock, which did not move).
            device.offset = 30 * Self.day
            let later = try #require(await alice.status().scheduler.nextWake)
            #expect(later.timeIntervalSince(device.now()) >= 0 && later.timeIntervalSince(device.now()) <= 61)
            // Online again: once the backoff has passed on the monotonic clock, the write is uploaded.
            network.isOnline = true
            while alice.hasPendingUpload {
                clock.advance(by: .seconds(5))
                try await Task.sleep(for: .milliseconds(5))
            }
            #expect(try alice.failedOperations().isEmpty)
        }
    }

    @Test("a retry is due at its time, or at once when it lies further ahead than the policy ever waits")
    func retryDue() {
        let policy = RetryPolicy(initialDelay: .seconds(1), maximumDelay: .seconds(30))
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(policy.isDue(retryAt: now - 1, now: now))
        #expect(policy.isDue(retryAt: now, now: now))
        #expect(!policy.isDue(retryAt: now + 10, now: now))
        #expect(!policy.isDue(retryAt: now + 30, now: now))
        #expect(policy.isDue(retryAt: now + 3 * Self.day, now: now))
    }

    static func expectNoNegativeAges(_ report: Diagnostics, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect((report.oldestPendingAgeSeconds ?? 0) >= 0, sourceLocation: sourceLocation)
        for collection in report.collections {
            #expect((collection.lastPullAgeSeconds ?? 0) >= 0, "\(collection.name)", sourceLocation: sourceLocation)
        }
    }
}
