import Foundation

/// A `cairn serve` child process on a free loopback port, so its memory is measured apart from the client's.
final class ServerProcess: @unchecked Sendable {
    let process = Process()
    let port: Int

    /// Starts `cairn serve --data DIR --port 0 --durability D` with this same executable and waits for its port.
    convenience init(dataDirectory: URL, durability: String = "full") throws {
        try self.init(storage: ["--data", dataDirectory.path, "--durability", durability])
    }

    /// Starts `cairn serve` on the storage `arguments` name (`--data DIR ...` or `--postgres URL`) and waits for its
    /// port: `port`, or a free one when 0.
    init(storage arguments: [String], port: Int = 0) throws {
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe")
        process.arguments = ["serve", "--port", String(port), "--log-level", "warning", "--purge-interval", "0"] + arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        var text = ""
        let handle = output.fileHandleForReading
        while !text.contains("\n") {
            let chunk = handle.availableData
            guard !chunk.isEmpty else { throw CLIError("the server process exited before listening") }
            text += String(decoding: chunk, as: UTF8.self)
        }
        guard let range = text.range(of: #":(\d+) "#, options: .regularExpression),
            let port = Int(text[range].dropFirst().dropLast())
        else { throw CLIError("cannot read the server's port from: \(text)") }
        self.port = port
        // The rest of its output is read and dropped on a thread of its own, so a server that logs much never blocks
        // on a full pipe.
        Thread.detachNewThread {
            while !handle.availableData.isEmpty {}
        }
    }

    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// The server's peak resident memory so far.
    var peakRSS: Int? { ProcessUsage.peakRSS(pid: process.processIdentifier) }

    /// CPU seconds the server has used so far.
    var cpuSeconds: Double? { ProcessUsage.cpuSeconds(pid: process.processIdentifier) }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }

    /// Ends the server with SIGKILL, as a crash or the OOM killer would, and waits for it to be gone.
    func kill() {
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}
