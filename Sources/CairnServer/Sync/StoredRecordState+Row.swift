import CairnProtocol

extension StoredRecordState {
    /// A stored row's state, its data parsed (only the records a batch touches are parsed, never a feed page).
    init(_ row: RecordRow) throws {
        let record = try RecordText(
            id: row.id, version: row.version, updatedAt: row.updatedAt, updatedBy: row.updatedBy, deleted: row.deleted,
            dataText: row.dataText
        ).record()
        self.init(record: record, fieldVersions: row.fieldVersions, lastLiveDataText: row.deleted ? row.priorDataText : nil)
    }
}
