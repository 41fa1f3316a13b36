import CairnProtocol

/// Translates records between the shape an app build was made for (its schema number) and the current schema, by the
/// declared steps in between (renames and conversions both ways), and brings stored records whose migration is not
/// done to the current shape. A translator for the current number with no pending steps changes nothing.
///
/// ```swift
/// let translator = try history.translator(for: 1)
/// let sent = try translator.incoming(operation).get()   // "score" becomes "rating"
/// let answered = translator.outgoing(record.data)        // "rating" back to "score"
/// ```
struct SchemaTranslator: Sendable {
    /// The schema number the app build's records are shaped for.
    let number: Int
    /// The current schema.
    let current: Schema
    /// The schema of ``number``, when kept.
    let client: Schema?
    /// The steps from the build's shape to the current one.
    let forward: [DataStep]
    /// The steps whose migration of stored records is not done.
    let pending: [DataStep]

    /// Whether records pass unchanged both ways.
    var isIdentity: Bool { number >= current.number && pending.isEmpty }
    /// Whether the build is older than the current schema.
    var isOldBuild: Bool { number < current.number }

    /// `operation` in the current shape: renamed fields get their new names, converted ones their new type, a new
    /// required field its declared value on create. A change that sets a field since dropped (a create or patch), or
    /// a value that cannot be converted, is refused with the reason.
    func incoming(_ operation: SyncOperation) -> Result<SyncOperation, ErrorBody> {
        guard isOldBuild, var data = operation.data else { return .success(operation) }
        for step in forward where step.collection == operation.collection {
            // A declared value fills a new required field of a new record; a patch or update leaves it as stored.
            if case .fill = step.kind, operation.op != .create { continue }
            switch step.apply(to: &data) {
            case .unconvertible(let field, let value, let type)?:
                return .failure(.validation(
                    "field \"\(field)\" of \(operation.collection) is now \(type.article) and \(value.kindName) cannot be converted to it",
                    field: field))
            case .dropped(let field)? where operation.op != .update:
                return .failure(ErrorBody(
                    code: .incompatibleSchema,
                    message: "field \"\(field)\" of \(operation.collection) was removed in schema version \(current.number); this change to it cannot be applied",
                    details: ["collection": .string(operation.collection), "field": .string(field)]))
            case .dropped?, nil:
                continue
            }
        }
        var translated = operation
        translated.data = data
        return .success(translated)
    }

    /// The data of a full-record write (`update`) from an old build, completed from the stored record: the current
    /// fields the build does not know keep their stored values (an old build never clears them), and a new required
    /// field still absent gets its declared value.
    func completingUpdate(_ data: [String: JSONValue], stored: [String: JSONValue], collection: String) -> [String: JSONValue] {
        guard isOldBuild, let schema = current.collection(named: collection) else { return data }
        var completed = data
        let known = knownFields(collection)
        for field in schema.fields where !known.contains(field.name) && completed[field.name] == nil {
            if let value = stored[field.name] { completed[field.name] = value }
        }
        for step in forward where step.collection == collection {
            if case .fill(let field, let value) = step.kind, completed[field] == nil { completed[field] = value }
        }
        return completed
    }

    /// The current names of the fields the build's schema declares in `collection`.
    private func knownFields(_ collection: String) -> Set<String> {
        Set((client?.collection(named: collection)?.fields ?? []).map { DataStep.currentName(of: $0.name, in: collection, after: forward) })
    }

    /// Stored data (of `collection`) as the build knows it: pending steps applied, then the steps since the build's
    /// schema reverted.
    func outgoing(_ data: [String: JSONValue], collection: String) -> [String: JSONValue] {
        var shaped = stored(data, collection: collection)
        for step in forward.reversed() where step.collection == collection { step.revert(&shaped) }
        return shaped
    }

    /// Stored data text shaped by ``outgoing(_:collection:)``; the text as it is when nothing changes it.
    func outgoing(text: String, collection: String) -> String {
        guard !isIdentity, affects(collection), let data = try? JSONValue(parsing: text).objectValue else {
            return text
        }
        return JSONValue.object(outgoing(data, collection: collection)).jsonText()
    }

    /// Stored data in the current shape: the pending steps applied.
    func stored(_ data: [String: JSONValue], collection: String) -> [String: JSONValue] {
        var shaped = data
        for step in pending where step.collection == collection { step.apply(to: &shaped) }
        return shaped
    }

    /// A download query of the build (`where`) naming fields as the current schema does: renamed fields get their
    /// new names (its values are compared as they are).
    func incoming(_ filter: Filter, collection: String) -> Filter {
        guard isOldBuild else { return filter }
        switch filter {
        case .and(let filters): return .and(filters.map { incoming($0, collection: collection) })
        case .or(let filters): return .or(filters.map { incoming($0, collection: collection) })
        case .not(let inner): return .not(incoming(inner, collection: collection))
        case .condition(let field, let op, let value):
            return .condition(field: DataStep.currentName(of: field, in: collection, after: forward), op: op, value: value)
        }
    }

    /// A stored record's state in the current shape: the pending steps applied to its data and field versions.
    func stored(_ state: StoredRecordState, collection: String) -> StoredRecordState {
        guard !state.record.deleted, pending.contains(where: { $0.collection == collection }) else { return state }
        return state.applying(pending.filter { $0.collection == collection })
    }

    /// Whether any step touches `collection`.
    func affects(_ collection: String) -> Bool {
        forward.contains { $0.collection == collection } || pending.contains { $0.collection == collection }
    }
}
