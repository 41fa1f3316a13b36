import ArgumentParser
import Cairn
import CairnProtocol
import Foundation

/// `cairn call`: calls an action of the project's schema through a store's server, now or (with `--queue`) at the
/// store's next sync, in order with its queued writes.
struct CallCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "call",
        abstract: "Call an action of the project's schema: its backend's JSON answer is printed (or, with --queue, the call waits for the next sync).",
        discussion: #"""
            Online, prints the backend's JSON answer; a refusal prints the error and exits 1. With --queue, the call is \
            queued in the store, offline, after the writes queued before it; its idempotency key is printed, and the \
            next `cairn sync` sends it once (see `cairn action-results`).

            Example:
              CAIRN_PASSWORD=... cairn call --store field.sqlite closeJob --arguments '{"jobId": "j-7"}'
              cairn call --store field.sqlite closeJob --arguments '{"jobId": "j-7"}' --queue
            """#)

    @OptionGroup var options: StoreOptions
    @Argument(help: "The action's name, as the schema declares it.") var action: String
    @Option(name: .long, help: "The arguments, JSON (default: null).") var arguments: String?
    @Flag(name: .long, help: "Queue the call for the next sync instead of calling now.") var queue = false

    func run() async throws {
        let value = try arguments.map { text in
            try CLIError.wrap("--arguments is not JSON") { try JSONValue(parsing: Array(text.utf8)) }
        } ?? .null
        let client = try await options.open(connect: !queue)
        if queue {
            let key = try await CLIError.wrap("cannot queue \(action)") { try await client.enqueue(action: action, arguments: value) }
            print("queued \(action); it is sent at the next cairn sync")
            print(key)
            return
        }
        let result = try await CLIError.wrap("\(action) failed") { try await client.call(action, arguments: value) }
        print(result.jsonText())
    }
}

/// `cairn action-results`: the outcomes of the action calls a store queued and a sync sent.
struct ActionResultsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "action-results",
        abstract: "List the outcomes of a store's queued action calls once a sync sent them (offline).",
        discussion: """
            One line per call, oldest first: its key, the action, and the backend's answer or the error. With --json, \
            prints {"status":"ok","result":{"actionResults":[{"key","action","arguments","result"?,"error"?,"httpStatus"?,"completedAt"}]}}.

            Example:
              cairn action-results --store field.sqlite --json
            """)

    @OptionGroup var options: StoreOptions
    @OptionGroup var output: JSONOutputOption

    func run() async throws {
        let client = try await options.open(connect: false)
        let results = try await CLIError.wrap("cannot read the action results") { try await client.actionResults() }
        if output.json {
            let list = try JSONValue(parsing: Array(try CairnJSON.encode(results)))
            print(JSONValue.object(["status": "ok", "result": ["actionResults": list]]).jsonText())
            return
        }
        for outcome in results {
            let said = outcome.result.map { "ok \($0.jsonText())" } ?? outcome.error.map { "\($0.code): \($0.message)" } ?? ""
            print("\(outcome.key) \(outcome.action) \(said)")
        }
    }
}
