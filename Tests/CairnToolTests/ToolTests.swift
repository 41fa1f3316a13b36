import CairnProtocol
import CairnTesting
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// Runs the built `cairn` binary as a user would, and reads what it prints.
enum Tool {
    static var binary: URL? {
        var directory = Bundle.main.bundleURL
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("cairn")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return nil
    }

    struct Output {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    static func run(_ arguments: [String], environment: [String: String] = [:]) throws -> Output {
        guard let binary else { throw CocoaError(.fileNoSuchFile) }
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        var inherited = ProcessInfo.processInfo.environment
        inherited["CAIRN_PASSWORD"] = nil
        process.environment = inherited.merging(environment) { $1 }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try Tool.launch(process)
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Output(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                      stderr: String(decoding: stderr, as: UTF8.self))
    }

    /// ``run(_:environment:)`` off the concurrency pool, for tests whose server runs in this process: a blocking
    /// wait there would starve the server of the threads it answers on.
    static func runDetached(_ arguments: [String], environment: [String: String] = [:]) async throws -> Output {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try run(arguments, environment: environment) })
            }
        }
    }

    private static let launching = NSLock()

    /// Starts `process`, one launch at a time: Foundation's `Process.run()` on Linux can crash when several threads
    /// launch at once (seen here once as a bad memmove inside `run()` while the suite spawned many processes).
    static func launch(_ process: Process) throws {
        launching.lock()
        defer { launching.unlock() }
        try process.run()
    }

    /// Runs `cairn` with `arguments` and kills it with SIGKILL after `delay`; returns true if it finished first.
    static func run(_ arguments: [String], environment: [String: String] = [:], killedAfter delay: Duration) async throws -> Bool {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try Tool.launch(process)
        try await Task.sleep(for: delay)
        let finished = !process.isRunning
        if !finished { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        return finished
    }

    static func temporaryDirectory() -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("cairn-tool-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}

@Suite("The cairn tool", .enabled(if: Tool.binary != nil, "the cairn binary is not built next to the tests"))
struct ToolTests {
    @Test("admin sets up projects, users, roles and schemas, with clear errors")
    func admin() throws {
        let data = Tool.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        let d = ["--data", data.path]
        #expect(try Tool.run(["admin"] + d + ["add-project", "field"]).status == 0)
        let again = try Tool.run(["admin"] + d + ["add-project", "field"])
        #expect(again.status != 0)
        #expect(again.stderr.contains("already exists"))
        let badName = try Tool.run(["admin"] + d + ["add-project", "Field!"])
        #expect(badName.status != 0)
        #expect(badName.stderr.contains("must match"))
        #expect(try Tool.run(["admin"] + d + ["add-user", "alice", "--password", "long enough pass"]).status == 0)
        let short = try Tool.run(["admin"] + d + ["add-user", "bob", "--password", "short"])
        #expect(short.status != 0)
        #expect(short.stderr.contains("8 to 72"))
        #expect(try Tool.run(["admin"] + d + ["grant", "alice", "--project", "field", "--role", "writer"]).status == 0)
        let badRole = try Tool.run(["admin"] + d + ["grant", "alice", "--project", "field", "--role", "owner"])
        #expect(badRole.status != 0)
        #expect(badRole.stderr.contains("reader, writer or admin"))
        let missingProject = try Tool.run(["admin"] + d + ["grant", "alice", "--project", "nope", "--role", "reader"])
        #expect(missingProject.status != 0)
        #expect(missingProject.stderr.contains("does not exist"))

        let schemaFile = data.appendingPathComponent("schema.json")
        try Data(#"{"collections": [{"name": "notes", "fields": [{"name": "title", "type": "string"}]}]}"#.utf8).write(to: schemaFile)
        let set = try Tool.run(["admin"] + d + ["set-schema", "--project", "field", schemaFile.path])
        #expect(set.status == 0)
        #expect(set.stdout.contains("1 collections"))
        let unreadable = try Tool.run(["admin"] + d + ["set-schema", "--project", "field", data.appendingPathComponent("none.json").path])
        #expect(unreadable.status != 0)
        #expect(unreadable.stderr.contains("cannot read the schema file"))
        try Data(#"{"collections": [{"name": "notes", "fields": [{"name": "title", "type": "integer"}]}]}"#.utf8).write(to: schemaFile)
        let incompatible = try Tool.run(["admin"] + d + ["set-schema", "--project", "field", schemaFile.path])
        #expect(incompatible.status != 0)
        #expect(incompatible.stderr.contains("incompatible_schema"))
        try Data("{nope".utf8).write(to: schemaFile)
        let malformed = try Tool.run(["admin"] + d + ["set-schema", "--project", "field", schemaFile.path])
        #expect(malformed.stderr.contains("not a valid schema"))
    }

    @Test("help texts explain the commands, and bad flags are refused")
    func help() throws {
        let help = try Tool.run(["--help"])
        #expect(help.stdout.contains("serve"))
        #expect(help.stdout.contains("admin"))
        #expect(help.stdout.contains("demo"))
        #expect(try Tool.run(["serve", "--help"]).stdout.contains("--data"))
        let bad = try Tool.run(["serve", "--port", "99999"])
        #expect(bad.status != 0)
        #expect(bad.stderr.contains("--port"))
        #expect(try Tool.run(["serve", "--bogus"]).status != 0)
    }

    @Test("serve answers on the port it prints, with the admin's data")
    func serve() async throws {
        let data = Tool.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        _ = try Tool.run(["admin", "--data", data.path, "add-project", "field"])
        let process = Process()
        process.executableURL = Tool.binary
        process.arguments = ["serve", "--data", data.path, "--port", "0"]
        let out = Pipe()
        process.standardOutput = out
        try Tool.launch(process)
        defer { process.terminate(); process.waitUntilExit() }
        var line = ""
        while !line.contains("\n") {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line += String(decoding: chunk, as: UTF8.self)
        }
        let url = try #require(line.split(separator: " ").first { $0.hasPrefix("http://") }.map(String.init))
        let (body, response) = try await URLSession.shared.data(from: URL(string: url + "/health")!)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(try JSONValue(parsing: body)["status"] == "ok")
    }

    @Test("the shipped binary holds no test-support code and no fixed password")
    func cleanBinary() throws {
        let binary = try Data(contentsOf: try #require(Tool.binary))
        for marker in ["CairnTesting", "FaultProxy", "SwitchableTransport", "TestServer", TestServer.password] {
            #expect(binary.range(of: Data(marker.utf8)) == nil, "the cairn binary contains \(marker)")
        }
    }

    @Test("demo runs the story and exits 0 when the replicas converge")
    func demo() throws {
        let output = try Tool.run(["demo"])
        #expect(output.status == 0, "\(output.stdout)\(output.stderr)")
        #expect(output.stdout.contains("converged"))
    }
}
