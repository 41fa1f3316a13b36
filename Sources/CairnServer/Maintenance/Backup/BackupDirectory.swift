import CairnProtocol
import Foundation

/// A directory a backup or a restore writes into: it must be new or empty, and what the run wrote is removed again
/// when it fails, so that a second attempt finds it empty.
struct BackupDirectory {
    /// The directory.
    let url: URL
    /// Whether the run made it (then it is removed on failure; otherwise only emptied).
    let made: Bool

    /// Makes `url` (with its parents), or takes it when it is an empty directory; anything else is
    /// `already_exists` naming `what` (`--to`, `--data`).
    static func prepare(_ url: URL, what: String) throws -> BackupDirectory {
        let manager = FileManager.default
        var isDirectory: ObjCBool = false
        guard manager.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            try manager.createDirectory(at: url, withIntermediateDirectories: true)
            return BackupDirectory(url: url, made: true)
        }
        guard isDirectory.boolValue else {
            throw ErrorBody(code: .alreadyExists, message: "\(what) \(url.path) is a file: name a new or empty directory")
        }
        guard try manager.contentsOfDirectory(atPath: url.path).isEmpty else {
            throw ErrorBody(code: .alreadyExists, message: "\(what) \(url.path) is not empty: name a new or empty directory")
        }
        return BackupDirectory(url: url, made: false)
    }

    /// Removes what the run wrote: the directory when it made it, else its contents.
    func discard() {
        let manager = FileManager.default
        if made {
            try? manager.removeItem(at: url)
            return
        }
        for name in (try? manager.contentsOfDirectory(atPath: url.path)) ?? [] {
            try? manager.removeItem(at: url.appendingPathComponent(name))
        }
    }
}
