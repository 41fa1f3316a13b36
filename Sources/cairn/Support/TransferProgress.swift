import Cairn
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Shows a file transfer's progress: a bar redrawn in place on a terminal, plain lines at every tenth when the
/// output is a pipe or a file (for scripts and logs).
final class TransferProgress: @unchecked Sendable {
    private let label: String
    private let isTerminal = isatty(STDERR_FILENO) == 1
    private let started = Date()
    private var lastTenth = -1
    private var lastDraw = Date.distantPast
    private let lock = NSLock()

    init(_ label: String) { self.label = label }

    /// Shows `bytes` of `total`.
    func show(_ bytes: Int64, of total: Int64) {
        lock.lock()
        defer { lock.unlock() }
        let fraction = total > 0 ? min(1, Double(bytes) / Double(total)) : 1
        let elapsed = max(Date().timeIntervalSince(started), 0.001)
        let rate = Double(bytes) / elapsed / 1_000_000
        if isTerminal {
            guard Date().timeIntervalSince(lastDraw) > 0.1 || bytes >= total else { return }
            lastDraw = Date()
            let width = 30
            let filled = Int(fraction * Double(width))
            let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled)
            let line = String(format: "\r%@ [%@] %3d%% %@ of %@, %.1f MB/s", label, bar, Int(fraction * 100), Self.size(bytes), Self.size(total), rate)
            FileHandle.standardError.write(Data(line.utf8))
        } else {
            let tenth = Int(fraction * 10)
            guard tenth > lastTenth else { return }
            lastTenth = tenth
            FileHandle.standardError.write(Data("\(label): \(tenth * 10)% (\(Self.size(bytes)) of \(Self.size(total)))\n".utf8))
        }
    }

    /// Ends the bar's line on a terminal.
    func finish() {
        if isTerminal { FileHandle.standardError.write(Data("\n".utf8)) }
    }

    /// `12.3 MB`, `512 B`.
    static func size(_ bytes: Int64) -> String {
        if bytes < 1000 { return "\(bytes) B" }
        if bytes < 1_000_000 { return String(format: "%.1f KB", Double(bytes) / 1000) }
        if bytes < 1_000_000_000 { return String(format: "%.1f MB", Double(bytes) / 1_000_000) }
        return String(format: "%.2f GB", Double(bytes) / 1_000_000_000)
    }

    /// Shows the progress of the client's transfer of `id` while `body` runs.
    static func watching<T>(_ client: CairnClient, id: @escaping @Sendable () -> String?, label: String, _ body: () async throws -> T) async rethrows -> T {
        let progress = TransferProgress(label)
        let watcher = Task {
            for await status in await client.statusUpdates() {
                guard let id = id(), let transfer = status.fileTransfers[id] else { continue }
                progress.show(transfer.bytes, of: transfer.totalBytes)
            }
        }
        defer {
            watcher.cancel()
            progress.finish()
        }
        return try await body()
    }
}
