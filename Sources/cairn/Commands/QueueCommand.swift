import ArgumentParser
import Cairn
import CairnProtocol
import Foundation

/// `cairn queue`: the store's upload queue as a list (offline): pending or failed operations, filtered, and the
/// same selection cancelled, retried or discarded at once.
struct QueueCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "queue",
        abstract: "List a local store's pending or failed changes, and cancel, retry or discard them (offline).",
        discussion: """
            Prints {"status":"ok","result":{"pending":[...]}} (or "failed" with --failed), oldest first; queued action calls \
            follow the changes, with "kind": "action" (they are sent after the changes queued before them). \
            --collection and --id (repeatable) select operations, as do --group (upload group), --tag (custom tag) and \
            --where (a JSON filter on the records as the device shows them, in each one's collection); --newest-first and --limit \
            order and cut the list. With --cancel (pending), --retry or --discard (failed), every selected operation is acted \
            on in one transaction and the count is printed. --hold G keeps upload group G's writes local (no sync uploads \
            them) until --release G; each prints {"status":"ok","result":{"held":[...]}} with the groups held after it.
              cairn queue --store field.sqlite --failed --collection notes
              cairn queue --store field.sqlite --failed --collection notes --discard
              cairn queue --store field.sqlite --collection notes --where '{"field":"done","op":"eq","value":false}'
              cairn queue --store field.sqlite --hold visit-118
            """)

    @OptionGroup var options: StoreOptions
    @Flag(name: .long, help: "The failed list instead of the pending queue.") var failed = false
    @Option(name: .long, help: "Only operations on this collection.") var collection: String?
    @Option(name: .customLong("id"), help: "Only operations on this record id (repeat for several).") var ids: [String] = []
    @Option(name: .long, help: "Only operations written in this upload group.") var group: String?
    @Option(name: .long, help: "Only operations written with this custom tag.") var tag: String?
    @Option(name: .long, help: "Only operations whose record matches this JSON filter (read in each record's own collection).") var `where`: String?
    @Option(name: .long, help: "Hold this upload group: its writes stay local until released.") var hold: String?
    @Option(name: .long, help: "Release this held upload group: the next sync uploads its writes.") var release: String?
    @Flag(name: .long, help: "Newest first.") var newestFirst = false
    @Option(name: .long, help: "At most this many.") var limit: Int?
    @Flag(name: .long, help: "Cancel the selected pending operations.") var cancel = false
    @Flag(name: .long, help: "Queue the selected failed operations again.") var retry = false
    @Flag(name: .long, help: "Delete the selected failed operations.") var discard = false

    func validate() throws {
        guard [cancel, retry, discard].filter({ $0 }).count <= 1 else { throw ValidationError("give at most one of --cancel, --retry and --discard") }
        if cancel && failed { throw ValidationError("--cancel takes pending operations: drop --failed") }
        if (retry || discard) && !failed { throw ValidationError("--retry and --discard take failed operations: add --failed") }
        if let limit, limit < 0 { throw ValidationError("--limit cannot be negative") }
        if hold != nil || release != nil {
            guard hold == nil || release == nil, !cancel, !retry, !discard, !failed else {
                throw ValidationError("--hold and --release go alone (one of them, without --cancel, --retry, --discard or --failed)")
            }
        }
    }

    func run() async throws {
        let client = try await options.open(connect: false)
        let recordFilter = try self.where.map { text in
            try CLIError.wrap("--where is not a filter") { try CairnJSON.decode(Filter.self, from: Data(text.utf8)) }
        }
        let filter = OperationFilter(
            collection: collection, ids: ids.isEmpty ? nil : Set(ids), uploadGroup: group, customTag: tag, where: recordFilter,
            newestFirst: newestFirst, limit: limit)
        let result: JSONValue
        if let hold {
            try CLIError.wrap("cannot hold \(hold)") { _ = try client.hold(uploadGroup: hold) }
            result = ["held": .array(try client.heldUploadGroups().map(JSONValue.string))]
        } else if let release {
            try CLIError.wrap("cannot release \(release)") { _ = try client.release(uploadGroup: release) }
            result = ["held": .array(try client.heldUploadGroups().map(JSONValue.string))]
        } else if cancel {
            result = ["cancelled": .integer(Int64(try CLIError.wrap("cannot cancel") { try client.cancelPending(filter) }))]
        } else if retry {
            result = ["retried": .integer(Int64(try CLIError.wrap("cannot retry") { try client.retryFailed(filter) }))]
        } else if discard {
            result = ["discarded": .integer(Int64(try CLIError.wrap("cannot discard") { try client.discardFailed(filter) }))]
        } else if failed {
            result = ["failed": .array(try client.failedOperations(filter).map { operation in
                ["id": .integer(operation.id), "opId": .string(operation.opId), "collection": .string(operation.collection),
                 "recordId": .string(operation.recordID), "kind": .string(operation.kind.rawValue),
                 "error": .object(["code": .string(operation.error.code.rawValue), "message": .string(operation.error.message)]
                    .merging(operation.error.details.map { ["details": .object($0)] } ?? [:]) { first, _ in first }),
                 "failedAt": .string(RFC3339.string(from: operation.failedAt))]
            })]
        } else {
            var pending: [JSONValue] = try client.pendingOperations(filter).map { operation in
                ["opId": .string(operation.opId), "collection": .string(operation.collection), "recordId": .string(operation.recordID),
                 "kind": .string(operation.kind.rawValue), "attempts": .integer(Int64(operation.attempts)),
                 "createdAt": .string(RFC3339.string(from: operation.createdAt)),
                 "group": operation.uploadGroup.map(JSONValue.string) ?? .null, "tag": operation.customTag.map(JSONValue.string) ?? .null]
            }
            // Queued action calls are listed too, unless the selection names records or write options.
            if collection == nil && ids.isEmpty && group == nil && tag == nil {
                let calls: [JSONValue] = try client.queuedActions().map { call in
                    ["kind": "action", "action": .string(call.action), "key": .string(call.key), "attempts": .integer(Int64(call.attempts)),
                     "createdAt": .string(RFC3339.string(from: call.createdAt))]
                }
                pending = newestFirst ? calls.reversed() + pending : pending + calls
                if let limit { pending = Array(pending.prefix(max(0, limit))) }
            }
            result = ["pending": .array(pending)]
        }
        print(JSONValue.object(["status": "ok", "result": result]).jsonText())
    }
}
