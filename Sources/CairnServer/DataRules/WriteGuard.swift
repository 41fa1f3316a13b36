import CairnProtocol
import Foundation

/// The write rules of one batch's caller: a create, update, patch or delete is applied only when the stored record
/// (when there is one) and the record after the change both match the caller's write filter, which includes the
/// read rule (``RecordScope/write``). Anything else is refused with `forbidden`, naming the operation and never
/// the record's data.
///
/// ```swift
/// let guard = try WriteGuard(filters: ["jobs": scope.write!], schema: schema)
/// if let refusal = try guard.refusal(collection: "jobs", id: "j-1", data: stored.record.data) { ... }
/// ```
struct WriteGuard: Sendable {
    /// The write filter per collection the caller is bound in; collections not listed are not bound.
    let filters: [String: Filter]
    /// The read filter per collection the caller is bound in.
    let readFilters: [String: Filter]
    let schema: Schema
    private let evaluator: RecordFilterEvaluator

    /// A guard over these filters.
    init(filters: [String: Filter], readFilters: [String: Filter] = [:], schema: Schema) throws {
        self.filters = filters
        self.readFilters = readFilters
        self.schema = schema
        self.evaluator = try RecordFilterEvaluator.shared()
    }

    /// `not_found` when `tombstone` is of a record the caller never could read (its last live data does not match the
    /// read rule, or is unknown): an answer about it (`conflict` with the tombstone, `applied` for a repeated delete)
    /// would tell of a record hidden from the caller.
    func hiddenTombstone(collection: String, id: String, _ tombstone: StoredRecordState, lookups: BatchLookups) throws -> ErrorBody? {
        guard tombstone.record.deleted, let filter = readFilters[collection], let collectionSchema = schema.collection(named: collection) else {
            return nil
        }
        if let text = tombstone.lastLiveDataText, let data = (try? JSONValue(parsing: Data(text.utf8)))?.objectValue,
            try evaluator.matches(filter, collection: collectionSchema, id: id, dataText: text, referenced: referenced(by: data, in: collectionSchema, filter, lookups))
        {
            return nil
        }
        return ErrorBody(code: .notFound, message: "\(collection) \"\(id)\" does not exist", details: ["id": .string(id)])
    }

    /// `forbidden` when the caller may not write the record with this data (before or after the change); `nil` when
    /// it may, or the collection binds no rule.
    func refusal(collection: String, id: String, data: [String: JSONValue], state: String, lookups: BatchLookups) throws -> ErrorBody? {
        guard let filter = filters[collection], let collectionSchema = schema.collection(named: collection) else { return nil }
        let text = JSONValue.object(data).jsonText()
        let referenced = referenced(by: data, in: collectionSchema, filter, lookups)
        guard try !evaluator.matches(filter, collection: collectionSchema, id: id, dataText: text, referenced: referenced) else { return nil }
        return ErrorBody(
            code: .forbidden,
            message: "Your data rules do not let you write \(collection) \"\(id)\" (\(state)); `cairn admin explain` says why",
            details: ["collection": .string(collection), "id": .string(id)])
    }

    /// The live records `data` names in the `reference` fields `filter` follows (``FollowedReference``), as the batch
    /// has them: what the rule reads of them. None when the filter follows no reference.
    private func referenced(
        by data: [String: JSONValue], in collection: CollectionSchema, _ filter: Filter, _ lookups: BatchLookups
    ) -> [String: [String: String]] {
        guard FollowedReference.follows(filter, in: collection) else { return [:] }
        var referenced: [String: [String: String]] = [:]
        for field in collection.referenceFields {
            guard let target = field.collection, case .string(let id)? = data[field.name], let state = lookups.record(target, id),
                !state.record.deleted
            else { continue }
            referenced[target, default: [:]][id] = JSONValue.object(state.record.data).jsonText()
        }
        return referenced
    }

    /// The records the filters follow references to from the stored records `snapshot` holds, that `reads` does not
    /// read yet: a batch reads them too, so a record is judged by its referenced record as stored.
    func unreadTargets(of snapshot: TransactionSnapshot, reads: TransactionReads) throws -> [String: [String]] {
        var targets: [String: Set<String>] = [:]
        for (name, filter) in filters.merging(readFilters, uniquingKeysWith: { first, _ in first }) {
            guard let collection = schema.collection(named: name), FollowedReference.follows(filter, in: collection) else { continue }
            for row in snapshot.records[name] ?? [] {
                let text = row.deleted ? row.priorDataText : row.dataText
                guard let text, let data = try JSONValue(parsing: Data(text.utf8)).objectValue else { continue }
                for field in collection.referenceFields {
                    if let target = field.collection, case .string(let id)? = data[field.name], !(reads.records[target] ?? []).contains(id) {
                        targets[target, default: []].insert(id)
                    }
                }
            }
        }
        return targets.mapValues { $0.sorted() }
    }
}
