import ArgumentParser
import Cairn
import CairnProtocol
import CairnServer
import CairnLinkShaping
import Foundation

/// `cairn bench`: the benchmarks (sync by default, `queries` for local reads and caches).
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure Cairn (build with -c release for real figures).",
        subcommands: [
            SyncBenchCommand.self, QueryBenchCommand.self, LiveBenchCommand.self, EncryptionBenchCommand.self, BackendBenchCommand.self,
            EventsBenchCommand.self, RulesBenchCommand.self, TransportsBenchCommand.self, NetworkBenchCommand.self,
        ],
        defaultSubcommand: SyncBenchCommand.self)
}

/// `cairn bench sync` (the default): sync throughput against a server on loopback.
struct SyncBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Measure sync throughput against a server on loopback (build with -c release for real figures).",
        discussion: """
            Starts `cairn serve` as a child process with a temporary data directory, pushes --records records of \
            about 500 bytes in batches, pulls them back in pages, then times small incremental pulls: through the \
            SDK with plain JSON, then again with gzip. Every rate is printed beside SQLite's own insert of the same \
            rows, measured in the same run. With --json the last line is one JSON object with the figures.

            Example:
              swift run -c release cairn bench --records 100000 --json
            """)

    @Option(name: .long, help: "How many records to push and pull.")
    var records: Int = 100_000

    @Option(name: .long, help: "Operations per batch.")
    var batch: Int = 1000

    @Option(name: .long, help: "Records per pulled page (the SDK's default).")
    var page: Int = CairnConfiguration.defaultPageSize

    @OptionGroup var output: JSONOutputOption

    func validate() throws {
        guard records > 0 else { throw ValidationError("--records must be positive") }
        guard (1...1000).contains(batch) else { throw ValidationError("--batch must be from 1 to 1000") }
        guard (1...10000).contains(page) else { throw ValidationError("--page must be from 1 to 10000") }
    }

    func run() async throws {
        let result = try await SyncBenchmark(records: records, batchSize: batch, pageSize: page) { print($0) }.run()
        if output.json {
            print(JSONValue.object(result).jsonText())
        }
    }
}

/// `cairn bench network`: a first sync over a shaped link, with and without compression.
struct NetworkBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "network",
        abstract: "Measure a first sync over a slow link: bytes on the wire, time, and the time the link needs for them.",
        discussion: """
            Starts `cairn serve` on loopback with --records records of varied field notes (about 500 bytes each), then \
            runs first syncs into fresh stores through a proxy shaped like --link: RATE[/UPRATE],LATENCY[,loss=PERCENT], \
            the latency a round trip (20mbit,60ms: 20 Mbit/s each way, 30 ms each way). Each round syncs once with gzip \
            and once without, alternating which goes first. It prints the bytes each way, the time, and the ideal time: \
            the bytes at the link's rate plus the round trips the protocol cannot overlap (the handshake, each request \
            that is not a page, each collection's first page). With --json the last line is one JSON object of medians.

            Example:
              swift run -c release cairn bench network --link 20mbit,60ms \\
                --records 100000 --json
            """)

    @Option(name: .long, help: "The link: RATE[/UPRATE],LATENCY[,loss=PERCENT], such as 20mbit,60ms or 5mbit/1mbit,150ms.")
    var link: String = "20mbit,60ms"

    @Option(name: .long, help: "Records in the first sync.")
    var records: Int = 20_000

    @Option(name: .long, help: "Rounds of one gzip and one plain sync each (the medians are reported).")
    var rounds: Int = 3

    @OptionGroup var output: JSONOutputOption

    func validate() throws {
        guard records > 0 else { throw ValidationError("--records must be positive") }
        guard rounds > 0 else { throw ValidationError("--rounds must be positive") }
        do { _ = try LinkProfile(parsing: link) } catch { throw ValidationError("--link: \(error)") }
    }

    func run() async throws {
        let result = try await NetworkBenchmark(records: records, link: try LinkProfile(parsing: link), rounds: rounds) { print($0) }.run()
        if output.json { print(JSONValue.object(result).jsonText()) }
    }
}

/// `cairn bench transports`: the SDK's HTTP transports side by side.
struct TransportsBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "transports",
        abstract: "Measure the SDK's HTTP transports side by side: push, pull, and a large file's upload and download.",
        discussion: """
            Starts `cairn serve` on loopback and, with each transport in turn (alternating order round by round), \
            pushes --records records, pulls as many into a fresh store, uploads a --file-megabytes file and downloads \
            it into a fresh store's cache. Prints one table of medians; with --json the last line is one JSON object.

            Example:
              swift run -c release cairn bench transports --records 50000 \\
                --file-megabytes 200 --json
            """)

    @Option(name: .long, help: "The transports to measure, comma-separated (asynchttpclient, urlsession); all built in by default.")
    var transport: String?

    @Option(name: .long, help: "Records pushed, and pulled, per round.")
    var records: Int = 50_000

    @Option(name: .long, help: "Size of the file to upload and download, in MB.")
    var fileMegabytes: Int = 200

    @Option(name: .long, help: "Rounds (the medians are reported).")
    var rounds: Int = 3

    @OptionGroup var output: JSONOutputOption

    var transports: [BenchTransport] {
        guard let transport else { return BenchTransport.available }
        return transport.split(separator: ",").compactMap { BenchTransport(rawValue: $0.trimmingCharacters(in: .whitespaces).lowercased()) }
    }

    func validate() throws {
        guard records > 0, fileMegabytes > 0, rounds > 0 else { throw ValidationError("the counts must be positive") }
        let names = BenchTransport.available.map(\.rawValue).joined(separator: ", ")
        guard !transports.isEmpty, transports.allSatisfy(BenchTransport.available.contains) else {
            throw ValidationError("--transport takes \(names)")
        }
    }

    func run() async throws {
        let result = try await CLIError.wrap("the benchmark failed") {
            try await TransportBenchmark(transports: transports, records: records, fileMegabytes: fileMegabytes, rounds: rounds) { print($0) }.run()
        }
        if output.json { print(JSONValue.object(result).jsonText()) }
    }
}

/// `cairn bench rules`: what data rules cost a pull.
struct RulesBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rules",
        abstract: "Measure what data rules cost a pull (build with -c release for real figures).",
        discussion: """
            Loads the same records into a collection without rules and one with a read rule, then pulls them into fresh \
            stores through the SDK: without rules, with a rule that matches every record for the user, and for a user \
            whose rule matches 1%. The three alternate for --rounds rounds; the figures are medians. With --json the \
            last line is one JSON object with the figures.

            Example:
              swift run -c release cairn bench rules --records 100000 --json
            """)

    @Option(name: .long, help: "How many records each collection holds.")
    var records: Int = 100_000

    @Option(name: .long, help: "Records per pulled page.")
    var page: Int = 5000

    @Option(name: .long, help: "Rounds of the three pulls.")
    var rounds: Int = 5

    @OptionGroup var output: JSONOutputOption

    func validate() throws {
        guard records >= 100 else { throw ValidationError("--records must be at least 100") }
        guard (1...10000).contains(page) else { throw ValidationError("--page must be from 1 to 10000") }
        guard rounds > 0 else { throw ValidationError("--rounds must be positive") }
    }

    func run() async throws {
        let result = try await RulesBenchmark(records: records, pageSize: page, rounds: rounds) { print($0) }.run()
        if output.json { print(JSONValue.object(result).jsonText()) }
    }
}

/// `cairn bench queries`: local reads and JSON caches, each beside raw GRDB doing the same work.
struct QueryBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "queries",
        abstract: "Measure local queries, full-text search and JSON caches beside raw GRDB (no server needed).",
        discussion: """
            Fills local-only collections in a temporary store (and the same tables in a plain GRDB database), then \
            times indexed equality and range lookups, full-text searches, and caching JSON entries. Medians of 200 \
            runs. With --json the last line is one JSON object with the figures.

            Example:
              swift run -c release cairn bench queries --records 1000000 --json
            """)

    @Option(name: .long, help: "Rows of the indexed collection.")
    var records: Int = 1_000_000

    @Option(name: .long, help: "Rows of the full-text searched collection.")
    var searchRecords: Int = 100_000

    @Option(name: .long, help: "JSON entries to cache.")
    var cacheEntries: Int = 100_000

    @OptionGroup var output: JSONOutputOption

    func validate() throws {
        guard records >= 100, searchRecords > 0, cacheEntries > 0 else {
            throw ValidationError("--records must be at least 100, and the other counts positive")
        }
    }

    func run() async throws {
        let result = try await QueryBenchmark(records: records, searchRecords: searchRecords, cacheEntries: cacheEntries) { print($0) }.run()
        if output.json { print(JSONValue.object(result).jsonText()) }
    }
}

/// `cairn bench live`: how long a write takes to reach another client through the schedulers.
struct LiveBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "live",
        abstract: "Measure the time from a write on one client to its arrival on another, both running their scheduler.",
        discussion: """
            Starts `cairn serve` on loopback and two clients running `run()` (push after the delay, pull on the \
            server's live notice), writes one record at a time on one and waits for it on the other. Prints the \
            median and p99. With --json the last line is one JSON object with the figures.

            Example:
              swift run -c release cairn bench live --writes 200 --push-delay-ms 1000
            """)

    @Option(name: .long, help: "How many writes to time.")
    var writes: Int = 200

    @Option(name: .long, help: "The scheduler's push delay after a write, in milliseconds (the SDK's default is 1000).")
    var pushDelayMs: Int = 1000

    @OptionGroup var output: JSONOutputOption

    func validate() throws {
        guard writes > 0, pushDelayMs >= 0 else { throw ValidationError("--writes must be positive and --push-delay-ms not negative") }
    }

    func run() async throws {
        let result = try await LiveLatencyBenchmark(writes: writes, pushDelay: .milliseconds(pushDelayMs)) { print($0) }.run()
        if output.json { print(JSONValue.object(result).jsonText()) }
    }
}

/// `cairn bench encryption`: what a store key costs, plaintext and encrypted stores side by side.
struct EncryptionBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "encryption",
        abstract: "Measure encrypted stores beside plaintext ones: initial pull, file download, indexed lookups, rekey.",
        discussion: """
            Starts `cairn serve` with --pull-records records and pulls them into fresh stores, plaintext and encrypted \
            in turn (medians of --rounds); downloads a --file-megabytes file into such stores' file caches the same \
            way; fills two local stores with --lookup-records records and times indexed \
            lookups in each; then re-keys the encrypted one. With --json the last line is one JSON object.

            Example:
              swift run -c release cairn bench encryption \\
                --pull-records 100000 --lookup-records 1000000 --json
            """)

    @Option(name: .long, help: "Records to pull from the server.")
    var pullRecords: Int = 100_000

    @Option(name: .long, help: "Local records to look up among.")
    var lookupRecords: Int = 1_000_000

    @Option(name: .long, help: "Size of the file to download, in MB.")
    var fileMegabytes: Int = 200

    @Option(name: .long, help: "Rounds of each measure (the median is reported).")
    var rounds: Int = 3

    @OptionGroup var output: JSONOutputOption

    func validate() throws {
        guard pullRecords > 0, lookupRecords > 0, fileMegabytes > 0, rounds > 0 else { throw ValidationError("the counts must be positive") }
    }

    func run() async throws {
        let result = try await EncryptionBenchmark(pullRecords: pullRecords, lookupRecords: lookupRecords, fileMegabytes: fileMegabytes, rounds: rounds) { print($0) }.run()
        if output.json { print(JSONValue.object(result).jsonText()) }
    }
}

/// `cairn bench backends`: the server's push and pull on SQLite and on PostgreSQL, side by side.
struct BackendBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backends",
        abstract: "Measure the server's push and pull on SQLite and on PostgreSQL in the same run.",
        discussion: """
            Each round starts `cairn serve` on a fresh SQLite data directory and on the PostgreSQL database (a new \
            project there), in alternating order, pushes --records records in raw batches and pulls them back in \
            pages. Prints the medians of --rounds. The database gets one project per round: give it one of its own.

            Example:
              swift run -c release cairn bench backends \\
                --postgres postgres://cairn@127.0.0.1/bench --json
            """)

    @Option(name: .long, help: "The PostgreSQL database to fill (postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE), or CAIRN_POSTGRES_URL.")
    var postgres: String?

    @Option(name: .long, help: "Records pushed and pulled per round and backend.")
    var records: Int = 50_000

    @Option(name: .long, help: "Operations per batch.")
    var batch: Int = 1000

    @Option(name: .long, help: "Records per pulled page.")
    var page: Int = 5000

    @Option(name: .long, help: "Rounds (the medians are reported).")
    var rounds: Int = 3

    @OptionGroup var output: JSONOutputOption

    func validate() throws {
        guard records > 0, rounds > 0 else { throw ValidationError("--records and --rounds must be positive") }
        guard (1...1000).contains(batch), (1...10000).contains(page) else { throw ValidationError("--batch is 1 to 1000, --page 1 to 10000") }
        guard PostgresDatabase.url(postgres) != nil else {
            throw ValidationError("--postgres URL (or CAIRN_POSTGRES_URL) names the database to measure")
        }
    }

    func run() async throws {
        let url = PostgresDatabase.url(postgres) ?? ""
        let result = try await CLIError.wrap("the benchmark failed") {
            try await BackendBenchmark(postgresURL: url, records: records, batchSize: batch, pageSize: page, rounds: rounds) { print($0) }.run()
        }
        if output.json { print(JSONValue.object(result).jsonText()) }
    }
}

/// `cairn bench events`: how many live-notice streams one server holds with notices still fast.
struct EventsBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events",
        abstract: "Measure how many live-notice streams one server instance holds with a notice latency p99 under one second.",
        discussion: """
            Starts `cairn serve` (SQLite, or PostgreSQL with --postgres), opens event streams in steps, and at each step \
            times --writes writes from the batch being sent to each stream receiving its notice. Stops at the first step \
            whose p99 reaches one second or that misses a notice. The streams are read in this process, on the same \
            machine, so the figure is a floor.

            Example:
              swift run -c release cairn bench events \\
                --steps 1000,2500,5000,7500,10000 --json
            """)

    @Option(name: .long, help: "A PostgreSQL database for the server (or CAIRN_POSTGRES_URL); SQLite without it.")
    var postgres: String?

    @Option(name: .long, help: "Stream counts to try, in order, comma-separated.")
    var steps: String = "1000,2500,5000,7500,10000"

    @Option(name: .long, help: "Writes timed at each step.")
    var writes: Int = 10

    @OptionGroup var output: JSONOutputOption

    func validate() throws {
        guard parsedSteps.count > 0, parsedSteps.allSatisfy({ $0 > 0 }) else { throw ValidationError("--steps is a list of positive counts") }
        guard writes > 0 else { throw ValidationError("--writes must be positive") }
    }

    var parsedSteps: [Int] { steps.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) } }

    func run() async throws {
        let url = PostgresDatabase.url(postgres)
        let result = try await CLIError.wrap("the benchmark failed") {
            try await EventsBenchmark(postgresURL: url, steps: parsedSteps, writes: writes) { print($0) }.run()
        }
        if output.json { print(JSONValue.object(result).jsonText()) }
    }
}
