import CairnLinkShaping
import Foundation

/// One store of a chaos run: a user writing private records (`logs`, ids of its own) and shared ones (`notes`, ids
/// every store writes), each `cairn put` and `cairn sync` a process of its own, some of them killed part-way.
struct ChaosWriter {
    let index: Int
    let store: URL
    let user: String
    let serverURL: URL
    let project: String
    let tally: ChaosTally
    let settings: ChaosSettings

    /// Environment of every child: the password, and an answer timeout short enough for cut connections to be retried.
    let environment: [String: String]

    /// The first sync, retried until one gets through the faults: the store remembers its server and user.
    func firstSync() async throws {
        var attempts = 0
        while true {
            let outcome = try await cairn([
                "sync", "--store", store.path, "--server", serverURL.absoluteString, "--project", project, "--user", user,
            ])
            if outcome.succeeded { return }
            attempts += 1
            if attempts >= 50 { throw CLIError("\(user)'s first sync failed 50 times: \(outcome.output)") }
        }
    }

    /// Writes and syncs until `done()` says the run has its faults and kills.
    func run(seed: UInt64, done: @Sendable () -> Bool) async throws {
        var random = SplitMix(seed: seed)
        var next = 0
        while !done() {
            // Three private records in one put, sometimes killed part-way.
            let ids = (0..<3).map { "p\(index)-\(next + $0)" }
            next += 3
            var arguments = ["put", "--store", store.path, "logs"]
            for id in ids { arguments += [id, #"{"message": "\#(id) by \#(user)"}"#] }
            let killPut = random.unit() < settings.putKillChance
            let put = try await cairn(arguments, killAfter: killPut ? .milliseconds(random.next(below: 60)) : nil)
            tally.update { counts in
                if put.succeeded {
                    counts.acknowledged.formUnion(ids)
                } else {
                    counts.unsure.formUnion(ids)
                    if put.killed { counts.clientKills += 1 }
                }
            }
            if !put.succeeded && !put.killed { throw CLIError("cairn put failed: \(put.output)") }

            // A shared record every store writes.
            let shared = "shared-\(random.next(below: settings.sharedRecords))"
            let write = try await cairn([
                "put", "--store", store.path, "notes", shared, #"{"title": "\#(user) at \#(next)", "count": \#(next)}"#,
            ])
            guard write.succeeded else { throw CLIError("cairn put failed: \(write.output)") }
            tally.update { $0.sharedWrites += 1 }

            // A sync through the faulty network, sometimes killed part-way.
            let killSync = random.unit() < settings.syncKillChance
            let sync = try await cairn(
                ["sync", "--store", store.path], killAfter: killSync ? .milliseconds(20 + random.next(below: 600)) : nil)
            tally.update { counts in
                counts.syncs += 1
                if sync.succeeded { counts.syncsSucceeded += 1 }
                if sync.killed { counts.clientKills += 1 }
            }
        }
    }

    private func cairn(_ arguments: [String], killAfter: Duration? = nil) async throws -> ChildRun.Outcome {
        try await ChildRun(arguments: arguments, environment: environment, outputFile: store.appendingPathExtension("out")).run(killAfter: killAfter)
    }
}
