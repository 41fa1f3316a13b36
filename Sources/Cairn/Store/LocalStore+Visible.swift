import CairnProtocol
import Foundation
import GRDB

extension LocalStore {
    /// Recomputes a record's visible row: the latest server state known, with its remaining failed and queued
    /// changes applied in order. Drops the shadow when no local change remains.
    func rebuildVisible(_ db: Database, table: CollectionTable, id: String) throws {
        guard let shadow = try shadows.shadow(db, collection: table.name, id: id) else { return }
        var data = shadow.serverData
        let failedChanges = try failed.operations(db, collection: table.name, id: id).map { ($0.kind, $0.data) }
        let queuedChanges = try queue.operations(db, collection: table.name, id: id).map { ($0.kind, $0.data) }
        let changes = failedChanges + queuedChanges
        for (kind, payload) in changes {
            switch kind {
            case .create, .update: data = payload ?? [:]
            case .patch: data = QueueCombiner.merged(data ?? [:], payload)
            case .delete: data = nil
            }
        }
        let current = try table.state(db, id: id)
        if let data {
            try table.upsert(db, id: id, data: data, version: shadow.serverVersion ?? 0,
                             updatedAt: current?.updatedAt, updatedBy: current?.updatedBy)
        } else {
            try table.remove(db, id: id)
        }
        if changes.isEmpty { try shadows.remove(db, collection: table.name, id: id) }
        try files.applyFileOverlays(db, table: table, ids: [id])
    }
}
