import Foundation

/// The `cairn serve` child of a chaos run: always on the same port (the fault proxy forwards there), killed with
/// SIGKILL and started again.
actor ChaosServer {
    private let storage: [String]
    private var process: ServerProcess
    let port: Int

    /// Starts `cairn serve` on `storage` (`--data DIR` or `--postgres URL`) on a free port.
    init(storage: [String]) throws {
        self.storage = storage
        process = try ServerProcess(storage: storage)
        port = process.port
    }

    /// SIGKILL, then a new server on the same port (retried while the old socket is let go).
    func killAndRestart() async throws {
        process.kill()
        try await start()
    }

    /// Starts the server again if it is not running; a no-op when it is.
    func ensureRunning() async throws {
        if !process.process.isRunning { try await start() }
    }

    private func start() async throws {
        var attempt = 0
        while true {
            do {
                process = try ServerProcess(storage: storage, port: port)
                return
            } catch {
                attempt += 1
                if attempt >= 20 { throw error }
                try await Task.sleep(for: .milliseconds(250))
            }
        }
    }

    /// Ends the server with SIGTERM.
    func stop() { process.stop() }
}
