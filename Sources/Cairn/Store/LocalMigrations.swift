import GRDB

/// Versioned migrations of Cairn's own tables in the local store, each made of the parts of the tables it touches.
/// Append; never edit a shipped migration.
enum LocalMigrations {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1-cairn-tables") { db in
            try MetaTable.createV1(db)
            try CollectionStateTable.createV1(db)
            try QueueTable.createV1(db)
            try ShadowTable.createV1(db)
            try FailedTable.createV1(db)
            try ConflictTable.createV1(db)
            try EventTable.createV1(db)
        }
        migrator.registerMigration("v2-attempts-apart", migrate: QueueTable.moveAttemptsApart)
        migrator.registerMigration("v3-files") { db in
            try FileUploadTable.createV3(db)
            try FileCacheTable.createV3(db)
        }
        migrator.registerMigration("v4-queries") { db in
            try LocalIndexTable.createV4(db)
            try JSONCacheTable.createV4(db)
            try DownloadQueryTable.createV4(db)
            try FailedTable.addDetailsV4(db)
        }
        migrator.registerMigration("v5-sync-lease", migrate: SyncLeaseTable.createV5)
        migrator.registerMigration("v6-file-deletions", migrate: FileDeletionTable.createV6)
        migrator.registerMigration("v7-change-sets") { db in
            try QueueTable.addChangeSetsV7(db)
            try FailedTable.addChangeSetsV7(db)
        }
        migrator.registerMigration("v8-queue-schema-version", migrate: QueueTable.addSchemaVersion)
        migrator.registerMigration("v9-actions") { db in
            try QueuedActionTable.createV9(db)
            try ActionResultTable.createV9(db)
        }
        migrator.registerMigration("v10-own-versions", migrate: CollectionStateTable.addOwnVersionsV10)
        migrator.registerMigration("v11-write-options") { db in
            try QueueTable.addWriteOptionsV11(db)
            try FailedTable.addWriteOptionsV11(db)
            try HeldGroupTable.createV11(db)
            try DownloadQueryTable.addPrefetchFilesV11(db)
        }
        migrator.registerMigration("v12-file-permissions", migrate: FileUploadTable.addSourceAndPermissionsV12)
        return migrator
    }
}
