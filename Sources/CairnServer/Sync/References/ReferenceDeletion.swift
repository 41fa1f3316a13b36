import CairnProtocol

/// What deleting a record does to the records whose `reference` fields name it, decided under the project's write
/// lock in the delete's transaction (``FieldSchema/onDelete``): `restrict` refuses the delete while a live record names
/// it, `nullify` clears those fields, `cascade` deletes those records too, and so on through their own referrers.
struct ReferenceDeletion {
    /// A record the delete changes besides its own: deleted, or with fields cleared.
    struct FollowUp: Sendable, Hashable {
        var collection: String
        var id: String
        /// Deleted (cascade), else the fields to clear (nullify).
        var deleted: Bool
        var cleared: Set<String>
    }

    let schema: Schema

    /// The records that deleting `id` of `collection` changes, in the order to write them; a `validation_failed` error
    /// naming the referrer's field when a `restrict` reference (reached directly or through cascades) forbids it.
    func followUps(of collection: String, id: String, in transaction: any ProjectWriteTransaction) async throws -> Result<[FollowUp], ErrorBody> {
        var deleting: [RecordKey] = [RecordKey(collection: collection, id: id)]
        var seen: Set<RecordKey> = Set(deleting)
        var cleared: [RecordKey: Set<String>] = [:]
        var order: [RecordKey] = []
        var next = 0
        while next < deleting.count {
            let target = deleting[next]
            next += 1
            for (source, field) in schema.references(to: target.collection) {
                for referrer in try await transaction.liveReferrers(collection: source.name, field: field.name, id: target.id) {
                    let key = RecordKey(collection: source.name, id: referrer)
                    guard !seen.contains(key) else { continue }
                    switch field.deletion {
                    case .restrict:
                        return .failure(ErrorBody(
                            code: .validationFailed,
                            message: "\(target.collection) \"\(target.id)\" is named by \(source.name) \"\(referrer)\" (\(field.name), onDelete restrict): "
                                + "delete or change that record first",
                            details: ["field": .string(field.name), "collection": .string(source.name), "id": .string(referrer)]))
                    case .nullify:
                        if cleared[key] == nil { order.append(key) }
                        cleared[key, default: []].insert(field.name)
                    case .cascade:
                        seen.insert(key)
                        deleting.append(key)
                    }
                }
            }
        }
        let deletions = deleting.dropFirst().map { FollowUp(collection: $0.collection, id: $0.id, deleted: true, cleared: []) }
        let clears = order.filter { !seen.contains($0) }.map { FollowUp(collection: $0.collection, id: $0.id, deleted: false, cleared: cleared[$0] ?? []) }
        return .success(clears + deletions)
    }
}
