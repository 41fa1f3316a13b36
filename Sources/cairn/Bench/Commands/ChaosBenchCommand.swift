import ArgumentParser
import Foundation

/// `cairn bench chaos`: faults and kills while stores write, then the checks that nothing acknowledged was lost or
/// applied twice.
struct ChaosBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chaos",
        abstract: "Break connections and kill processes while stores write; check that no acknowledged write is lost or applied twice.",
        discussion: """
            Starts `cairn serve` (SQLite in a temporary folder, or a new project in --postgres) behind a proxy that \
            breaks --fault-rate of the connections (cut requests, cut or dropped answers), and --stores stores, each a user \
            of its own, writing private records (`logs`) and shared ones (`notes`, every store writes them) with \
            `cairn put` and `cairn sync` processes. Some puts and syncs are killed with SIGKILL part-way, and the \
            server is killed and started again (a tenth of the kills). When the proxy has broken --faults connections \
            and --kills processes have been killed, the network heals and every store syncs; the run then checks that \
            every acknowledged record is on the server and in every store, that no store holds a record nobody wrote, \
            that every store matches the server (digests), and, on the stopped server's storage, that no operation \
            was applied twice. Exits 1 when a check fails. With --json the last line is one JSON object.

            Examples:
              cairn bench chaos --faults 300 --kills 30
              cairn bench chaos --faults 5000 --kills 500 --backend postgres --postgres postgres://cairn@localhost/cairn
            """)

    @Option(name: .long, help: "Connections the proxy must have broken before the network heals.")
    var faults: Int = 300

    @Option(name: .long, help: "Processes to kill with SIGKILL before the network heals (a tenth of them the server).")
    var kills: Int = 30

    @Option(name: .long, help: "The server's storage: sqlite or postgres.")
    var backend: ChaosSettings.Backend = .sqlite

    @Option(name: .long, help: "The PostgreSQL database for --backend postgres (default: CAIRN_POSTGRES_URL).")
    var postgres: String?

    @Option(name: .long, help: "Stores writing at once.")
    var stores: Int = 4

    @Option(name: .customLong("fault-rate"), help: "The share of connections the proxy breaks (0 to 1).")
    var faultRate: Double = 0.35

    @Option(name: .long, help: "The seed of the faults and the writers' choices (default: random).")
    var seed: UInt64?

    @OptionGroup var output: JSONOutputOption

    func validate() throws {
        guard faults >= 0, kills >= 0 else { throw ValidationError("--faults and --kills cannot be negative") }
        guard (0...1).contains(faultRate) else { throw ValidationError("--fault-rate must be between 0 and 1") }
        guard stores >= 2 else { throw ValidationError("--stores must be at least 2 (shared records need two writers)") }
    }

    func run() async throws {
        let settings = ChaosSettings(
            faults: faults, kills: kills, backend: backend, postgresURL: PostgresDatabase.url(postgres), stores: stores,
            seed: seed ?? UInt64.random(in: 0...UInt64.max), faultRate: faultRate)
        // Progress lines are written at once (not buffered), so a CI log shows them while the run goes on.
        let figures = try await ChaosRun(settings: settings) { FileHandle.standardOutput.write(Data(($0 + "\n").utf8)) }.run()
        output.printFigures(figures)
        if figures["passed"] != .bool(true) { throw ExitCode(1) }
    }
}

extension ChaosSettings.Backend: ExpressibleByArgument {}
