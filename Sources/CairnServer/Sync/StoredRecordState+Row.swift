import CairnProtocol

extension StoredRecordState {
    /// A stored row's state, its data parsed (only the records a batch touches are parsed, never a feed page).
    init(_ row: RecordRow) throws {
        let data = try JSONValue(parsing: Array(row.dataText.utf8)).objectValue ?? [:]
        let record = Record(
            id: row.id, version: row.version, updatedAt: RFC3339.date(from: row.updatedAt), updatedBy: row.updatedBy,
            deleted: row.deleted, data: data)
        self.init(record: record, fieldVersions: row.fieldVersions)
    }
}
