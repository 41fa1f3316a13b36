import ArgumentParser
import CairnProtocol
import CairnServer
import Foundation

struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run the whole Cairn story on this machine and check that every replica converges.",
        discussion: """
            Starts a server on a free loopback port with a temporary data directory, then two field workers write \
            offline, sync, conflict and resolve. Exits 0 only when every replica matches the server.
            """)

    func run() async throws {
        let story = DemoStory()
        do {
            try await story.run()
        } catch {
            print("✘ the demo failed: \(CLIError.describe(error))")
            await story.stop()
            throw ExitCode.failure
        }
        await story.stop()
    }
}
