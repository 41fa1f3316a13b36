import Foundation

/// A backup of a server's data directory, as `cairn admin backup` recorded it and `GET /v1/admin/backups` lists it.
///
/// ```swift
/// let list = try CairnJSON.decode(BackupList.self, from: body)
/// let last = list.backups.first?.createdAt   // newest first
/// ```
public struct BackupSummary: Codable, Sendable, Hashable {
    /// When the backup's copy of the database was taken: it holds every write acknowledged before.
    public var createdAt: Date
    /// The backup's directory, as the machine that made it names it.
    public var path: String
    /// The size of its copy of the database, in bytes.
    public var databaseBytes: Int64
    /// How many files' bytes it holds.
    public var fileCount: Int

    /// A backup with these values.
    public init(createdAt: Date, path: String, databaseBytes: Int64, fileCount: Int) {
        self.createdAt = createdAt
        self.path = path
        self.databaseBytes = databaseBytes
        self.fileCount = fileCount
    }
}

/// The body of `GET /v1/admin/backups`: the backups recorded, newest first.
public struct BackupList: Codable, Sendable, Hashable {
    /// The backups, newest first; empty when none was made.
    public var backups: [BackupSummary]

    /// A list of these backups.
    public init(backups: [BackupSummary]) { self.backups = backups }
}
