import CairnProtocol

/// A record's committed state plus the version at which each field last changed (for `merge-fields`).
struct StoredRecordState: Sendable, Hashable {
    /// The record as last committed (a tombstone has `deleted` set and empty data).
    var record: Record
    /// The version at which each field last changed; `merge-fields` compares them with an operation's `baseVersion`.
    var fieldVersions: [String: Int64]
    /// For a tombstone, the data the record had before it was deleted (data rules judge who may know of it); `nil`
    /// when unknown.
    var lastLiveDataText: String?

    /// A state with this record and these field versions.
    init(record: Record, fieldVersions: [String: Int64], lastLiveDataText: String? = nil) {
        self.record = record
        self.fieldVersions = fieldVersions
        self.lastLiveDataText = lastLiveDataText
    }
}

/// What to do with one operation, decided without I/O.
enum BatchPlan: Sendable, Hashable {
    /// Commit a new state at the next version.
    case write(data: [String: JSONValue], deleted: Bool)
    /// Applied, but nothing changes (deleting a tombstone): answer with this state.
    case unchanged(Record)
    /// The policy refused: answer `conflict` with this current state.
    case conflict(Record)
    /// Refused: answer `rejected` with this error.
    case reject(ErrorBody)
}

/// The batch endpoint's rules as a pure function of an operation, the record's current state and the collection's
/// schema: validation, the `create`/`update`/`patch`/`delete` semantics and the three conflict policies. Every
/// storage backend runs these same rules.
enum BatchPlanner {
    /// Decides what `operation` does.
    static func plan(_ operation: SyncOperation, current: StoredRecordState?, collection: CollectionSchema?) -> BatchPlan {
        guard Names.isValidID(operation.opId) else {
            return .reject(.validation("opId must be 1-128 characters of [A-Za-z0-9_.:-]", field: "opId"))
        }
        if let tag = operation.tag, !SyncOperation.isValidTag(tag) {
            return .reject(.validation("tag is at most 200 characters, without control characters", field: "tag"))
        }
        guard let collection else {
            return .reject(.validation("collection \"\(operation.collection)\" is not in the project's schema", field: "collection"))
        }
        guard Names.isValidID(operation.id) else {
            return .reject(.validation("id must be 1-128 characters of [A-Za-z0-9_.:-]", field: "id"))
        }
        if operation.op == .delete {
            guard operation.data == nil else { return .reject(.validation("delete takes no data", field: "data")) }
        } else if operation.data == nil {
            return .reject(.validation("\(operation.op.rawValue) needs data", field: "data"))
        }

        let newData: [String: JSONValue]
        switch operation.op {
        case .create:
            if let current, !current.record.deleted { return .conflict(current.record) }
            newData = stripNulls(operation.data!)
        case .update, .patch, .delete:
            guard let current else {
                return .reject(ErrorBody(code: .notFound, message: "record \(collection.name)/\(operation.id) does not exist",
                                         details: ["id": .string(operation.id)]))
            }
            if operation.op == .delete && current.record.deleted { return .unchanged(current.record) }
            let base = current.record.deleted ? [:] : current.record.data
            switch operation.op {
            case .update: newData = stripNulls(operation.data!)
            case .patch:
                var merged = base
                JSONValue.merge(&merged, operation.data!)
                newData = merged
            default: newData = [:]
            }
            if let baseVersion = operation.baseVersion, current.record.version > baseVersion,
                !policyAllows(operation, baseVersion: baseVersion, current: current, newData: newData, policy: collection.conflictPolicy)
            {
                return .conflict(current.record)
            }
        }
        if operation.op != .delete {
            do { try collection.validate(data: newData) } catch { return .reject(error) }
        }
        return .write(data: newData, deleted: operation.op == .delete)
    }

    /// Whether a write made on a stale `baseVersion` may apply under `policy`.
    static func policyAllows(
        _ operation: SyncOperation, baseVersion: Int64, current: StoredRecordState, newData: [String: JSONValue], policy: ConflictPolicy
    ) -> Bool {
        switch policy {
        case .reject: return false
        case .lastWriterWins: return true
        case .mergeFields:
            // A deletion (on either side) touches every field.
            if current.record.deleted || operation.op == .delete { return false }
            let touched: Set<String> =
                operation.op == .patch ? Set(operation.data!.keys) : changedFields(from: current.record.data, to: newData)
            return touched.allSatisfy { (current.fieldVersions[$0] ?? 0) <= baseVersion }
        }
    }

    /// The fields whose values differ between two versions of a record's data.
    static func changedFields(from old: [String: JSONValue], to new: [String: JSONValue]) -> Set<String> {
        var changed = Set<String>()
        for (key, value) in new where old[key] != value { changed.insert(key) }
        for key in old.keys where new[key] == nil { changed.insert(key) }
        return changed
    }

    /// The per-field versions after committing `newData` at `version`.
    static func fieldVersions(
        previous: StoredRecordState?, newData: [String: JSONValue], deleted: Bool, version: Int64
    ) -> [String: Int64] {
        fieldVersions(previous: previous, moving: movedFields(previous: previous, newData: newData, deleted: deleted), to: version)
    }

    /// The fields whose version a write of `newData` over `previous` moves: every field of a new record, else those
    /// that change.
    static func movedFields(previous: StoredRecordState?, newData: [String: JSONValue], deleted: Bool) -> [String] {
        guard let previous else { return deleted ? [] : Array(newData.keys) }
        return Array(changedFields(from: previous.record.deleted ? [:] : previous.record.data, to: deleted ? [:] : newData))
    }

    /// `previous`'s field versions with `moved` at `version`.
    static func fieldVersions(previous: StoredRecordState?, moving moved: [String], to version: Int64) -> [String: Int64] {
        var versions = previous?.fieldVersions ?? [:]
        for field in moved { versions[field] = version }
        return versions
    }

    /// Top-level `null` members mean "absent": they are not stored. Data without any is returned as it is (filtering
    /// would build a new dictionary for every pushed record).
    static func stripNulls(_ data: [String: JSONValue]) -> [String: JSONValue] {
        data.values.contains(where: \.isNull) ? data.filter { !$0.value.isNull } : data
    }
}
