import CairnProtocol

/// The batch rules of `reference` fields (PROTOCOL.md, References): a record may only come to name a live record of
/// the field's collection that its writer may read. A value the record already holds is not checked again.
///
/// The records a batch names are read with its own records, under the project's write lock when the batch names a
/// record it also writes or deletes from a referenced collection (``decidesUnderLock(_:targets:followed:schema:)``), so a target
/// created earlier in the same batch counts, and one deleted meanwhile does not.
enum RecordReferences {
    /// The records `operations` name in `reference` fields, by collection.
    static func targets(_ operations: [SyncOperation], schema: Schema) -> [String: [String]] {
        var targets: [String: Set<String>] = [:]
        for operation in operations {
            guard let data = operation.data, let collection = schema.collection(named: operation.collection) else { continue }
            for field in collection.referenceFields {
                if let target = field.collection, case .string(let id)? = data[field.name] { targets[target, default: []].insert(id) }
            }
        }
        return targets.mapValues { $0.sorted() }
    }

    /// `reads` with `targets`, the records the batch names in `reference` fields (``targets(_:schema:)``).
    static func reads(_ targets: [String: [String]], adding reads: TransactionReads) -> TransactionReads {
        var merged = reads
        for (collection, ids) in targets {
            let known = Set(merged.records[collection] ?? [])
            merged.records[collection, default: []] += ids.filter { !known.contains($0) }
        }
        return merged
    }

    /// Whether the batch must decide each operation after the one before it committed: it names in a reference a
    /// record it also writes, or deletes (or may delete) records that other records reference, whose `onDelete`
    /// changes records the batch may touch next, or changes records whose fields other collections' rules follow.
    /// `targets` are the records the batch names in `reference` fields (``targets(_:schema:)``); `followed`, the
    /// collections whose fields data rules follow (``FollowedReference/followers(in:)``).
    static func decidesUnderLock(_ operations: [SyncOperation], targets: [String: [String]], followed: Set<String>, schema: Schema) -> Bool {
        for operation in operations {
            // A change to a field other rules follow writes the records naming it again (``FollowedReference``).
            if operation.op != .create && operation.op != .delete && followed.contains(operation.collection) { return true }
            if targets[operation.collection]?.contains(operation.id) == true { return true }
            if operation.op == .delete, !schema.references(to: operation.collection).isEmpty { return true }
        }
        return false
    }

    /// Why `data` may not be written over `previous`: a `reference` field that comes to name an id that is not a live
    /// record of its collection (as of the operations applied so far), or one the writer may not read.
    static func problem(
        _ data: [String: JSONValue], previous: StoredRecordState?, collection: CollectionSchema?, lookups: BatchLookups,
        mayRead: (String, String, [String: JSONValue]) throws -> Bool
    ) throws -> ErrorBody? {
        for field in collection?.referenceFields ?? [] {
            guard let target = field.collection, case .string(let id)? = data[field.name], previous?.record.data[field.name] != .string(id)
            else { continue }
            guard let state = lookups.record(target, id), !state.record.deleted, try mayRead(target, id, state.record.data) else {
                return ErrorBody(
                    code: .validationFailed, message: "\(field.name) names \(target) \"\(id)\", which does not exist",
                    details: ["field": .string(field.name), "collection": .string(target), "id": .string(id)])
            }
        }
        return nil
    }
}
