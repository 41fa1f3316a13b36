import ArgumentParser
import Cairn
import CairnProtocol
import Foundation

/// Options shared by the commands that work on a local store.
struct StoreOptions: ParsableArguments {
    @Option(name: .long, help: "The local store file (created on first sync).")
    var store: String

    @Option(name: .long, help: "The server URL (remembered by the store after the first sync).")
    var server: String?

    @Option(name: .long, help: "The project (remembered by the store).")
    var project: String?

    @Option(name: .long, help: "The user (remembered by the store). The password comes from CAIRN_PASSWORD.")
    var user: String?

    @Option(
        name: .customLong("schema-version"),
        help: "The schema number the store's app build is made for (remembered by the store); the server translates records for it.")
    var schemaVersion: Int?

    @Option(
        name: .customLong("request-timeout"),
        help: "Seconds to wait for each answer of the server before retrying (default: CAIRN_REQUEST_TIMEOUT, else 30).")
    var requestTimeout: Int?

    @Option(
        name: .customLong("key-file"),
        help: "A file holding the store's passphrase, or raw: and 64 hex digits (default: CAIRN_STORE_KEY; neither: not encrypted).")
    var keyFile: String?

    /// Opens the store as a client; `connect` says whether to reach the server now (`allowUnsynced`: when the
    /// store never synced, connect once first).
    /// - Parameter timings: where the SDK's debug log and request traces go, for `cairn sync --timings`.
    func open(connect: Bool, allowUnsynced: Bool = false, timings: SyncTimings? = nil) async throws -> CairnClient {
        let key = try StoreKeySource.key(file: keyFile)
        let remembered = try CLIError.wrap("cannot read the store \(store)") { try CairnClient.storedIdentity(at: store, key: key) }
        guard let serverText = server ?? remembered?.server.absoluteString, let serverURL = URL(string: serverText),
            let project = project ?? remembered?.project, let user = user ?? remembered?.user
        else {
            throw CLIError("the store \(store) has not synced yet: give --server, --project and --user once")
        }
        let password = ProcessInfo.processInfo.environment["CAIRN_PASSWORD"] ?? ""
        let neverSynced = remembered == nil
        let connectNow = connect || (allowUnsynced && neverSynced)
        if (connectNow || allowUnsynced) && password.isEmpty { throw CLIError("set CAIRN_PASSWORD to \(user)'s password") }
        var configuration = CairnConfiguration(
            serverURL: serverURL, project: project, device: ProcessInfo.processInfo.hostName,
            credentials: .password(user: user, password: password), store: .file(store))
        configuration.app = "cairn"
        configuration.storeKey = key
        configuration.schemaVersion = try schemaVersion
            ?? CLIError.wrap("cannot read the store \(store)") { try CairnClient.storedSchemaVersion(at: store, key: key) }
        configuration.connectOnOpen = connectNow
        let timeoutText = requestTimeout.map(String.init) ?? ProcessInfo.processInfo.environment["CAIRN_REQUEST_TIMEOUT"]
        if let timeoutText {
            guard let seconds = Int(timeoutText), seconds > 0 else {
                throw CLIError("the request timeout is a whole number of seconds above 0, not \(timeoutText)")
            }
            configuration.requestTimeout = .seconds(seconds)
        }
        if let timings {
            configuration.logger = timings.logger
            configuration.traceRequests = true
        }
        return try await CLIError.wrap("cannot open the store \(store)") { try await CairnClient.open(configuration) }
    }
}

struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Upload a local store's pending changes, then download the server's changes.",
        discussion: """
            The first sync needs --server, --project and --user; the store remembers them. \
            The password is read from the CAIRN_PASSWORD environment variable. \
            With --watch it keeps running, printing each sync, until Ctrl-C. \
            With --timings a last line `timings: {...}` says where the time went, in milliseconds: opening the store \
            (signing in and the schema among it), the sync to its first page, between the first and last pages, \
            after the last page, and the rest.

            Example:
              CAIRN_PASSWORD=... cairn sync --store field.sqlite \\
                --server http://127.0.0.1:8080 --project field --user alice
            """)

    @OptionGroup var options: StoreOptions

    @Flag(name: .long, help: "Keep the store in sync until Ctrl-C: push after local writes (also by other cairn commands), pull on the server's live notices, retry with backoff.")
    var watch = false

    @Flag(name: .long, help: "Print where the sync's time went as a last line: timings: {JSON, milliseconds}.")
    var timings = false

    @Option(name: .long, help: "Upload only the writes of this upload group (repeat for several), then download.")
    var group: [String] = []

    func validate() throws {
        if watch && timings { throw ValidationError("--timings measures one sync: it does not go with --watch") }
        if watch && !group.isEmpty { throw ValidationError("--group uploads some groups once: it does not go with --watch") }
    }

    func run() async throws {
        if watch {
            // Offline at the start is fine: the scheduler retries until the server answers.
            let client = try await options.open(connect: false, allowUnsynced: true)
            try await SyncWatch(client: client, store: options.store).run()
            return
        }
        let timings = timings ? SyncTimings() : nil
        let client = try await options.open(connect: true, timings: timings)
        timings?.mark("opened")
        let groups = Set(group)
        let summary = try await CLIError.wrap("sync failed") {
            try await groups.isEmpty ? client.sync() : client.sync(uploadGroups: groups)
        }
        timings?.mark("synced")
        // Queued file uploads finish (or resume) before the tool exits.
        await client.files.waitForUploads()
        let status = await client.status()
        print("synced: pushed \(summary.pushed), pulled \(summary.pulled), conflicts \(summary.conflicts), failed \(summary.failed); "
              + "pending \(status.pendingUploads), failed uploads \(status.failedUploads)"
              + (status.pendingFiles + status.failedFiles > 0 ? "; files pending \(status.pendingFiles), failed \(status.failedFiles)" : ""))
        if let timings { print("timings: \(timings.breakdown().jsonText())") }
    }
}

struct PutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "put",
        abstract: "Create or replace records in a local store, offline, and queue their upload.",
        discussion: #"""
            Example:
              cairn put --store field.sqlite notes n-1 \
                '{"title": "Check exits", "done": false}'

            More records of the collection follow as ID JSON pairs. With --atomic they are one change set, which the \#
            server applies all or none (a refusal puts the whole set in the failed list as one entry):
              cairn put --store field.sqlite --atomic notes \
                n-1 '{"title": "a"}' n-2 '{"title": "b"}'

            A record's JSON can come from a file (@FILE) or standard input (-), for records larger than a \#
            command-line argument may be (128 KB on Linux):
              cairn put --store field.sqlite notes n-1 @note.json

            --group puts the writes in an upload group (`cairn sync --group G` uploads only such groups; \#
            `cairn queue --hold G` keeps them local), --tag gives them a tag the server keeps for support:
              cairn put --store field.sqlite --group visit-118 --tag app/4.2 notes n-1 '{"title": "a"}'
            """#)

    @OptionGroup var options: StoreOptions
    @Flag(help: "Queue the records as one change set: the server applies all of them or none.") var atomic = false
    @Option(name: .long, help: "The upload group of the writes.") var group: String?
    @Option(name: .long, help: "A tag the server keeps with each operation, for support.") var tag: String?
    @Argument(help: "The collection.") var collection: String
    @Argument(help: "The record id.") var id: String
    @Argument(help: "The record's data as a JSON object, or @FILE to read it from a file (- for standard input): a command-line argument holds at most 128 KB.") var json: String
    @Argument(help: "More records of the collection, as ID JSON pairs.") var more: [String] = []

    func run() async throws {
        guard more.count.isMultiple(of: 2) else { throw CLIError("more records come as ID JSON pairs; \(more.last ?? "") has no data") }
        var records = [(id, try Self.object(json, id: id))]
        for index in stride(from: 0, to: more.count, by: 2) { records.append((more[index], try Self.object(more[index + 1], id: more[index]))) }
        let client = try await options.open(connect: false)
        let collection = collection
        let write = { (writer: BatchWriter) throws in
            for (id, data) in records { try writer.save(collection, id: id, data: data) }
        }
        let saved = records.count == 1 ? "\(collection)/\(id)" : "\(records.count) records of \(collection)"
        let options = WriteOptions(uploadGroup: group, customTag: tag)
        try CLIError.wrap("cannot put \(saved)") {
            try atomic ? client.writeChangeSet(options: options, write) : client.writeBatch(options: options, write)
        }
        print("saved \(saved) locally\(atomic ? " as one change set" : ""); \(try client.pendingOperations().count) pending change(s) wait for sync")
    }

    /// A record's data from its JSON text, or from the file `@FILE` names (`-`: standard input).
    private static func object(_ json: String, id: String) throws -> [String: JSONValue] {
        let text: Data
        if json == "-" {
            text = FileHandle.standardInput.readDataToEndOfFile()
        } else if json.hasPrefix("@") {
            text = try CLIError.wrap("cannot read the data of \(id)") { try Data(contentsOf: URL(fileURLWithPath: String(json.dropFirst()))) }
        } else {
            text = Data(json.utf8)
        }
        let value = try CLIError.wrap("the data of \(id) is not valid JSON") { try JSONValue(parsing: text) }
        guard let data = value.objectValue else { throw CLIError("the data of \(id) must be a JSON object") }
        return data
    }
}

struct DeleteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete", abstract: "Delete a record in a local store, offline, and queue the deletion.")

    @OptionGroup var options: StoreOptions
    @Argument(help: "The collection.") var collection: String
    @Argument(help: "The record id.") var id: String

    func run() async throws {
        let client = try await options.open(connect: false)
        try CLIError.wrap("cannot delete \(collection)/\(id)") { try client.delete(collection, id: id) }
        print("deleted \(collection)/\(id) locally; \(try client.pendingOperations().count) pending change(s) wait for sync")
    }
}

struct QueryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Query a local store, offline: read-only SQL, or a collection with the filter language.",
        discussion: """
            With SQL, prints {"status":"ok","result":{"database":{"records":[...]}}}. A collection's table has the \
            collection's name; Cairn's own tables start with cairn_.
              cairn query --store field.sqlite "SELECT id, title FROM notes WHERE done = 0"

            With --collection, runs the SDK's query: --where takes a filter as JSON (PROTOCOL.md's language, the \
            server's `where`), --search finds words in the collection's full-text fields (best first), \
            --sort FIELD, or --sort=-FIELD for descending (repeatable), --limit and --offset; --count prints only the number.
              cairn query --store field.sqlite --collection notes \\
                --where '{"field":"done","op":"eq","value":false}' --sort=-due

            With --online, the same query runs on the server's current records instead (nothing is stored).
              cairn query --store field.sqlite --collection notes \\
                --where '{"field":"done","op":"eq","value":false}' --online
            """)

    @OptionGroup var options: StoreOptions
    @Argument(help: "The SQL (without --collection).") var sql: String?
    @Option(name: .long, help: "Query this collection instead of running SQL.") var collection: String?
    @Option(name: .customLong("where"), help: "A filter as JSON (with --collection).") var filter: String?
    @Option(name: .long, help: "Words to find in the collection's full-text fields (with --collection).") var search: String?
    @Option(name: .long, help: "A sort field (--sort=-FIELD for descending); repeat for several.") var sort: [String] = []
    @Option(name: .long, help: "The most records to print.") var limit: Int?
    @Option(name: .long, help: "Records to skip first.") var offset: Int?
    @Flag(name: .long, help: "Print only how many records match.") var count = false
    @Flag(name: .long, help: "Run the query on the server's current records, not the local store (with --collection).")
    var online = false

    func validate() throws {
        guard (sql == nil) != (collection == nil) else { throw ValidationError("give either SQL or --collection") }
        if collection == nil, filter != nil || search != nil || !sort.isEmpty || limit != nil || offset != nil || count || online {
            throw ValidationError("--where, --search, --sort, --limit, --offset, --count and --online go with --collection")
        }
    }

    func run() async throws {
        let client = try await options.open(connect: online)
        if let sql {
            let output = client.queryJSON(sql)
            print(output)
            if output.hasPrefix(#"{"status":"error""#) { throw ExitCode.failure }
            return
        }
        do {
            var query = Query(collection!, limit: limit, offset: offset)
            if let filter { query = query.filter(try CairnJSON.decode(Filter.self, from: Array(filter.utf8))) }
            if let search { query = query.matching(search) }
            for key in sort { query = key.hasPrefix("-") ? query.sorted(by: String(key.dropFirst()), ascending: false) : query.sorted(by: key) }
            let found = online ? try await client.fetchFromServer(query) : nil
            if count {
                let number = try found?.count ?? client.count(query)
                print(JSONValue.object(["status": "ok", "result": ["count": .integer(Int64(number))]]).jsonText())
                return
            }
            let records = try (found ?? client.records(query)).map { record -> JSONValue in
                ["id": .string(record.id), "version": .integer(record.version), "pending": .bool(record.hasPendingChanges), "data": .object(record.data)]
            }
            print(JSONValue.object(["status": "ok", "result": ["records": .array(records)]]).jsonText())
        } catch {
            let failure = (error as? CairnError) ?? CairnError(.validationFailed, "--where is not a filter: \(error)")
            print(JSONValue.object(["status": "error", "error": ["code": .string(failure.code.rawValue), "message": .string(failure.message)]]).jsonText())
            throw ExitCode.failure
        }
    }
}
