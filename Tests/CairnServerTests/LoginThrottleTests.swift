import CairnProtocol
@testable import CairnServer
import CairnTesting
import Foundation
import Testing

@Suite("Sign-in throttle: per user and client address")
struct LoginThrottleTests {
    /// The throttle over each place failures are kept: this process's memory, or the backend's shared table.
    static func logs(_ backend: StorageBackend, _ body: (any LoginFailureLog) async throws -> Void) async throws {
        try await backend.withStorage { storage in try await body(storage.loginFailures ?? MemoryLoginFailures()) }
    }

    @Test("wrong passwords from one address lock that address only; ten times as many from all lock the name", arguments: StorageBackend.all)
    func addresses(backend: StorageBackend) async throws {
        try await Self.logs(backend) { log in
            let throttle = LoginThrottle(log: log, maximumFailures: 5, window: 300)
            let start = Date(timeIntervalSince1970: 1_800_000_000)
            for second in 0..<5 { try await throttle.recordFailure("bob", from: "203.0.113.7", now: start + Double(second)) }
            let now = start + 10
            // The guesser's address is locked until its oldest counted failure leaves the window...
            #expect(try await throttle.retryAfter("bob", from: "203.0.113.7", now: now) == 290)
            // ...while bob, elsewhere, still gets in, and another name is not touched.
            #expect(try await throttle.retryAfter("bob", from: "198.51.100.1", now: now) == nil)
            #expect(try await throttle.retryAfter("alice", from: "203.0.113.7", now: now) == nil)
            // A success from bob's address forgets bob's failures from there only.
            try await throttle.recordFailure("bob", from: "198.51.100.1", now: now)
            try await throttle.recordSuccess("bob", from: "198.51.100.1")
            #expect(try await log.failures(of: "bob", since: start).count == 5)
            #expect(try await throttle.retryAfter("bob", from: "203.0.113.7", now: start + 301) == nil)

            // A guesser spread over many addresses: 50 failures in the window lock the name everywhere.
            for attempt in 0..<50 {
                try await throttle.recordFailure("carol", from: "192.0.2.\(attempt)", now: start + Double(attempt))
            }
            #expect(try await throttle.retryAfter("carol", from: "198.51.100.1", now: start + 60) == 240)
            #expect(try await throttle.retryAfter("carol", from: "198.51.100.1", now: start + 301) == nil)
        }
    }
}
