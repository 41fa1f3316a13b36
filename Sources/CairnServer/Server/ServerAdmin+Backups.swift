import CairnProtocol

extension ServerAdmin {
    /// The most backups ``backups()`` lists.
    public static let backupListLimit = 1000

    /// The backups recorded by `cairn admin backup` (``ServerBackup``), newest first, at most ``backupListLimit``:
    /// what `GET /v1/admin/backups` answers.
    public func backups() async throws -> [BackupSummary] {
        try await storage.backups(limit: Self.backupListLimit)
    }
}
