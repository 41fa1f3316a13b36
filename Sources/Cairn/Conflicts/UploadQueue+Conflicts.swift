import CairnProtocol
import Foundation
import GRDB

extension UploadQueue {
    /// The newest conflicts and their resolutions, newest first.
    func conflicts(limit: Int) throws -> [ConflictRecord] {
        try store.writer.read { db in try store.conflictLog.entries(db, limit: limit) }
    }

    /// The conflict as a resolver sees it.
    func conflict(for operation: PendingOperation, current: ServerRecord) throws -> Conflict {
        let table = try store.table(operation.collection)
        return try store.writer.read { db in
            let shadow = try store.shadows.shadow(db, collection: operation.collection, id: operation.recordID)
            let visible = try table.row(db, id: operation.recordID)
            return Conflict(collection: operation.collection, id: operation.recordID, base: shadow?.baseData, local: visible?.data,
                            server: current.deleted ? nil : current.data, serverVersion: current.version)
        }
    }

    /// Ends a conflict: records it, replaces the record's queued changes with the resolution (uploaded on top of
    /// the server's version; in their place when an action call waits behind them), and shows the resolved state.
    func resolve(_ conflict: Conflict, resolution: Resolution, current: ServerRecord) throws {
        let table = try store.table(conflict.collection)
        let date = store.now
        try store.writer.write { db in
            let queued = try store.queue.operations(db, collection: conflict.collection, id: conflict.id)
            let place = queued.first?.sequence
            // The resolution goes as the record's latest write was to go: in its upload group, with its tag and headers.
            let options = queued.last?.options ?? .none
            try store.queue.removeAll(db, collection: conflict.collection, id: conflict.id)
            // The server's state is the base of whatever is uploaded next.
            var shadow = try store.shadows.shadow(db, collection: conflict.collection, id: conflict.id) ?? Shadow()
            shadow.baseVersion = current.version
            shadow.baseData = conflict.server
            if current.version >= (shadow.serverVersion ?? 0) {
                shadow.serverVersion = current.version
                shadow.serverData = conflict.server
            }
            try store.shadows.save(db, shadow, collection: conflict.collection, id: conflict.id)

            var resolved: [String: JSONValue]?
            var upload: QueueCombiner.Change?
            switch resolution {
            case .server:
                resolved = conflict.server
            case .client:
                resolved = conflict.local
                upload = conflict.local.map { QueueCombiner.Change(.update, $0) } ?? (conflict.server == nil ? nil : QueueCombiner.Change(.delete))
            case .data(let data):
                resolved = data.filter { !$0.value.isNull }
                upload = QueueCombiner.Change(.update, resolved)
            case .delete:
                resolved = nil
                upload = conflict.server == nil ? nil : QueueCombiner.Change(.delete)
            }
            if let data = resolved {
                do throws(ErrorBody) { try table.schema.validate(data: data) } catch {
                    throw CairnError(error.code, "the resolution of \(conflict.collection)/\(conflict.id) is invalid: \(error.message)")
                }
            }
            if let upload {
                try store.queue.enqueue(db, collection: conflict.collection, id: conflict.id, upload, base: current.version, combining: .none, options: options, at: date)
                // An action call queued after the change this resolution replaces must still find it on the server.
                if let place, place <= (try QueuedActionTable().barrier(db)) {
                    try store.queue.keepPlace(db, collection: conflict.collection, id: conflict.id, at: place)
                }
            }
            try store.conflictLog.add(db, conflict, resolution: resolution.kind, resolved: resolved, at: date)
            // The server state with the resolution's upload applied: the resolved state.
            try store.rebuildVisible(db, table: table, id: conflict.id)
        }
    }
}
