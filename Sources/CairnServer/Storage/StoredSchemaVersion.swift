import CairnProtocol
import Foundation

/// One numbered schema of a project as stored (``StorageTable/schemaVersions``): the schema with the migration steps
/// that lead to it, and how far the migration of stored records to it went.
public struct StoredSchemaVersion: Sendable, Hashable {
    /// The schema, its ``Schema/number`` and ``Schema/migrations`` included.
    public var schema: Schema
    /// When it was set.
    public var createdAt: Date
    /// How far the migration of stored records went.
    public var migration: MigrationProgress

    /// A stored version with these values.
    public init(schema: Schema, createdAt: Date, migration: MigrationProgress) {
        self.schema = schema
        self.createdAt = createdAt
        self.migration = migration
    }
}

/// How far the migration of a project's stored records to a schema went.
public struct MigrationProgress: Sendable, Hashable {
    /// Where the migration is.
    public enum State: String, Sendable, Hashable {
        /// The schema declares no steps: nothing to migrate.
        case none
        /// Declared steps wait to be applied.
        case pending
        /// Pages of records are being migrated.
        case running
        /// Every record stored before the schema was set is in its shape.
        case done
    }

    /// Whether the migration still has records to rewrite (it is pending or running).
    public var isUnfinished: Bool { state == .pending || state == .running }

    /// Where the migration is.
    public var state: State
    /// The project's head version when the migration started: the records at or below it are migrated.
    public var through: Int64?
    /// The version of the last record a page looked at (pages go in version order).
    public var cursor: Int64
    /// How many records were rewritten.
    public var migrated: Int64

    /// A progress with these values.
    public init(state: State, through: Int64? = nil, cursor: Int64 = 0, migrated: Int64 = 0) {
        self.state = state
        self.through = through
        self.cursor = cursor
        self.migrated = migrated
    }

    /// The progress of a schema just set: pending when it declares steps.
    static func initial(for schema: Schema) -> MigrationProgress {
        MigrationProgress(state: schema.migrations.isEmpty ? .none : .pending)
    }
}
