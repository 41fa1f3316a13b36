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
}
