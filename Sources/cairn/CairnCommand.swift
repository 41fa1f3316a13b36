import ArgumentParser
import CairnProtocol

/// The `cairn` tool: run a server, manage its data, sync a local store, and see the whole story in a demo.
@main
struct CairnCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cairn",
        abstract: "Cairn: offline-first data sync for Swift apps, with a server you run yourself.",
        discussion: """
            Start with `cairn demo` to watch two offline clients write, sync, conflict and converge. \
            Run a server with `cairn serve --data ./cairn-data`, and set it up with `cairn admin`.
            """,
        version: CairnVersion.release,
        subcommands: [
            ServeCommand.self, AdminCommand.self, SyncCommand.self, PutCommand.self, DeleteCommand.self, QueryCommand.self, QueueCommand.self,
            FilesCommand.self, StatusCommand.self, DiagnosticsCommand.self, UnregisterCommand.self, StoreCommand.self, DemoCommand.self,
            BenchCommand.self, CallCommand.self, ActionResultsCommand.self,
        ])
}

extension CairnCommand {
    /// Runs the command the arguments name: the server with one malloc arena per core, the client commands with one
    /// (``ProcessMemory``).
    static func main() async {
        if CommandLine.arguments.dropFirst().first == "serve" { ProcessMemory.useOneArenaPerCore() } else { ProcessMemory.useOneArena() }
        await main(nil)
    }
}
