import Foundation
import GRDB

extension LocalStore {
    /// A fact about the store.
    func meta(_ key: MetaTable.Key) throws -> String? { try writer.read { db in try metaTable.value(db, key) } }

    /// Remembers whose store this is and where it syncs, in one transaction.
    func rememberIdentity(user: String, server: String, project: String, device: String) throws {
        try writer.write { db in
            try metaTable.set(db, .user, user)
            try metaTable.set(db, .server, server)
            try metaTable.set(db, .project, project)
            try metaTable.set(db, .device, device)
        }
    }

    /// Remembers the schema number the app build opens the store with; when it changed, the changes queued by the
    /// earlier build are marked with that build's number first, so they are uploaded (and translated) in its shape.
    func noteSchemaVersion(_ number: Int?) throws {
        try writer.write { db in
            let remembered = try metaTable.value(db, .schemaVersion).flatMap { Int($0) }
            guard remembered != number else { return }
            if let remembered { try queue.markSchemaVersion(db, remembered) }
            try metaTable.set(db, .schemaVersion, number.map(String.init))
        }
    }
}
