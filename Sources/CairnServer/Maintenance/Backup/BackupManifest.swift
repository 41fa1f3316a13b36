import CairnProtocol
import Foundation

/// The `backup.json` at the top of a backup directory: what ``ServerBackup`` wrote, so that ``ServerRestore`` can
/// check it is restoring a whole backup. A backup holds `cairn.sqlite`, the `files` folder and this manifest.
struct BackupManifest: Codable, Sendable, Hashable {
    /// The layout of the directory; ``ServerRestore`` refuses one it does not know.
    var format: Int
    /// When the database was copied.
    var createdAt: Date
    /// The size of `cairn.sqlite`.
    var databaseBytes: Int64
    /// How many files' bytes are under `files`.
    var fileCount: Int
    /// Their bytes in all.
    var fileBytes: Int64

    /// The layout this version writes and reads.
    static let currentFormat = 1
    /// The manifest's file name.
    static let fileName = "backup.json"

    /// Writes the manifest into `directory`, synced to disk.
    func write(into directory: URL) throws {
        let url = directory.appendingPathComponent(Self.fileName)
        try CairnJSON.encode(self).write(to: url)
        try BackupCheck.synchronize(url)
    }

    /// Reads the manifest of the backup in `directory`; `not_found` when there is none, `validation_failed` when it
    /// is not one this version reads.
    static func read(from directory: URL) throws -> BackupManifest {
        let url = directory.appendingPathComponent(fileName)
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw ErrorBody(code: .notFound, message: "\(directory.path) is not a Cairn backup: it has no \(fileName)")
        }
        let manifest: BackupManifest
        do {
            manifest = try CairnJSON.decode(BackupManifest.self, from: data)
        } catch {
            throw ErrorBody.validation("\(url.path) is not a Cairn backup manifest", field: "from")
        }
        guard manifest.format == currentFormat else {
            throw ErrorBody.validation(
                "\(directory.path) is a backup of format \(manifest.format); this cairn reads format \(currentFormat)", field: "from")
        }
        return manifest
    }
}
