import CairnProtocol

/// A record's next state with everything made but its version: the data stored and its text, the values its data
/// rules read, and the fields whose version moves. A batch prepares its rows before it takes the project's write lock;
/// ``RecordWriter/write(_:fieldVersions:)`` numbers them under it.
struct PreparedRow: Sendable {
    let collection: String
    let id: String
    /// The data stored: empty for a tombstone.
    let data: [String: JSONValue]
    /// `data`'s canonical JSON text.
    let dataText: String
    let deleted: Bool
    /// The values of the fields the collection's data rules read (``RuleFields``); `nil` for a tombstone or without rules.
    let ruleDataText: String?
    /// The record's state before the write, whose field versions carry over.
    let previous: StoredRecordState?
    /// The fields whose version becomes the write's.
    let movedFields: [String]
}

/// Makes ``PreparedRow``s for one schema, keeping what each collection's data rules read.
struct RowPreparer: Sendable {
    /// The project's schema, whose data rules say what each row keeps in `rule_data`.
    let schema: Schema?
    private var ruleFieldNames: [String: [String]] = [:]

    init(schema: Schema?) { self.schema = schema }

    /// The row that commits `data` (or a tombstone when `deleted`) over `previous`; `dataText` is `data`'s canonical
    /// JSON text when the caller made it already.
    mutating func prepare(
        collection: String, id: String, data: [String: JSONValue], dataText: String? = nil, deleted: Bool = false, previous: StoredRecordState?
    ) -> PreparedRow {
        let names = ruleFieldNames[collection] ?? schema?.collection(named: collection).map(RuleFields.names) ?? []
        ruleFieldNames[collection] = names
        let stored = deleted ? [:] : data
        return PreparedRow(
            collection: collection, id: id, data: stored, dataText: deleted ? "{}" : (dataText ?? JSONValue.object(stored).jsonText()),
            deleted: deleted, ruleDataText: deleted ? nil : RuleFields.text(of: stored, names: names), previous: previous,
            movedFields: BatchPlanner.movedFields(previous: previous, newData: data, deleted: deleted))
    }
}
