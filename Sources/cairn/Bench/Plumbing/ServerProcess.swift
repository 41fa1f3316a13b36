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
    /// port.
    init(storage arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe")
        process.arguments = ["serve", "--port", "0", "--log-level", "warning", "--purge-interval", "0"] + arguments
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
}
