import Foundation

/// One run of this same `cairn` executable as a child process, which a chaos run may end with SIGKILL part-way.
struct ChildRun {
    /// How the child ended.
    struct Outcome {
        /// The exit status (meaningless when `killed`).
        var status: Int32
        /// Whether SIGKILL ended it.
        var killed: Bool
        /// Its standard output and error, together.
        var output: String

        var succeeded: Bool { !killed && status == 0 }
    }

    let arguments: [String]
    let environment: [String: String]
    /// Where the child's output goes: a file, not a pipe, so a child never waits on a reader.
    let outputFile: URL

    /// Runs the child to its end, or sends it SIGKILL once `killAfter` has passed; waits off the concurrency pool.
    func run(killAfter: Duration? = nil) async throws -> Outcome {
        _ = FileManager.default.createFile(atPath: outputFile.path, contents: nil)
        let output = try FileHandle(forWritingTo: outputFile)
        defer { try? output.close() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe")
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = output
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            process.terminationHandler = { _ in continuation.resume() }
            do { try process.run() } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: error)
                return
            }
            if let killAfter {
                let pid = process.processIdentifier
                Task.detached {
                    try? await Task.sleep(for: killAfter)
                    if process.isRunning { kill(pid, SIGKILL) }
                }
            }
        }
        let killed = process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL
        let text = String(decoding: (try? Data(contentsOf: outputFile)) ?? Data(), as: UTF8.self)
        return Outcome(status: process.terminationStatus, killed: killed, output: text)
    }
}
