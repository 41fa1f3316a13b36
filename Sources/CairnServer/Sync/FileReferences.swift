import CairnProtocol

/// The batch rule of `file` fields: a record may only come to name a `completed` file of its project, so a record
/// never points at a file whose bytes are missing. A value the record already holds is not checked again (the
/// file may have been deleted since; a full update that resends it still applies).
enum FileReferences {
    /// The file ids `operations` write into `file` fields, for one lookup before the batch's transaction.
    static func ids(_ operations: [SyncOperation], schema: Schema) -> [String] {
        var ids = Set<String>()
        for operation in operations {
            guard let data = operation.data, let collection = schema.collection(named: operation.collection) else { continue }
            for field in collection.fields where field.type == .file {
                if case .string(let id)? = data[field.name] { ids.insert(id) }
            }
        }
        return Array(ids)
    }

    /// Why a rule-bound writer may not write `data` over `previous`: a `file` field that changes to a file it may not
    /// read (``AccessControl/mayRead(_:_:)``), which naming it in a record it can read would give it.
    static func unreadable(
        _ data: [String: JSONValue], previous: StoredRecordState?, collection: CollectionSchema?, hidden: Set<String>
    ) -> ErrorBody? {
        guard !hidden.isEmpty, let (field, id) = changed(data, previous: previous, collection: collection).first(where: { hidden.contains($0.id) })
        else { return nil }
        return ErrorBody(code: .forbidden, message: "Your data rules do not let you read file \(id), so you may not name it", details: ["field": .string(field)])
    }

    /// Why `data`, about to be written over `previous`, may not be: a `file` field that changes to a file not
    /// in `completed`.
    static func problem(
        _ data: [String: JSONValue], previous: StoredRecordState?, collection: CollectionSchema?, completed: Set<String>
    ) -> ErrorBody? {
        guard let (field, id) = changed(data, previous: previous, collection: collection).first(where: { !completed.contains($0.id) })
        else { return nil }
        return .validation("\(field) names file \(id), which is not a completed file of this project", field: field)
    }

    /// The `file` fields `data` sets to a file id the record does not hold already, with those ids.
    private static func changed(
        _ data: [String: JSONValue], previous: StoredRecordState?, collection: CollectionSchema?
    ) -> [(field: String, id: String)] {
        (collection?.fields ?? []).compactMap { field in
            guard field.type == .file, case .string(let id)? = data[field.name], previous?.record.data[field.name] != .string(id) else { return nil }
            return (field.name, id)
        }
    }
}
