import CairnProtocol

/// One operation's answer: its result, the text remembered for replays, and the JSON text sent back. An applied
/// write whose data is the operation's own is remembered without it (a replay takes it from the operation), and
/// every text is written by the shape's writer (``OperationResult/write(opId:status:record:current:error:into:)``)
/// around data text already made.
///
/// The text sent back is made by ``text(minimal:)``, after the write transaction: with the data left out of the
/// remembered text put back, unless the client asked for minimal answers.
struct BatchAnswer: Sendable {
    var result: OperationResult
    var storedText: String
    /// The data text and commit time of a write remembered without its data.
    private var leftOut: (dataText: String, updatedAt: String)?
    /// The answer in an older app build's shape, which is sent whole.
    var translatedText: String?

    /// An answer rendered from its result (conflicts, rejections, deleting a tombstone).
    init(result: OperationResult) {
        self.init(result: result, text: result.jsonText)
    }

    /// An answer whose text is made already (a replay).
    init(result: OperationResult, text: String) {
        self.result = result
        self.storedText = text
    }

    /// The answer of a write just committed as `row`.
    static func applied(_ opId: String, _ record: Record, row: RecordRow, dataAsSent: Bool) -> BatchAnswer {
        var answer = BatchAnswer(
            result: .applied(opId, record),
            text: appliedText(opId: opId, record: record, dataText: dataAsSent ? nil : row.dataText, updatedAt: row.updatedAt))
        if dataAsSent { answer.leftOut = (row.dataText, row.updatedAt) }
        return answer
    }

    /// The JSON text sent back: the remembered text, whole unless `minimal` (`Prefer: return=minimal`) and the write
    /// committed the data as sent, which is then answered without its data, and with `positional`
    /// (`results=positional`: the client matches results to operations by their place) without its `opId` too; an
    /// older build's translated answer as it is.
    func text(minimal: Bool, positional: Bool = false) -> String {
        if let translatedText { return translatedText }
        guard let leftOut, let record = result.record else { return storedText }
        if minimal && !positional { return storedText }
        return Self.appliedText(
            opId: minimal ? nil : result.opId, record: record, dataText: minimal ? nil : leftOut.dataText, updatedAt: leftOut.updatedAt)
    }

    /// The answer to an opId remembered already: the first answer when the operation is the same (by fingerprint),
    /// else `idempotency_mismatch`.
    static func repeated(
        _ operation: SyncOperation, prepared: PreparedOperation, remembered: RememberedOperation
    ) throws -> (OperationResult, String) {
        guard remembered.fingerprint == prepared.fingerprint || remembered.fingerprint == prepared.legacyFingerprint else {
            let mismatch = OperationResult.rejected(operation.opId, ErrorBody(
                code: .idempotencyMismatch, message: "opId \(operation.opId) was already used for a different operation; use a new opId"))
            return (mismatch, mismatch.jsonText)
        }
        return try replay(stored: remembered.result, of: operation, dataText: prepared.dataText)
    }

    /// Whether a write commits exactly the data its operation sent, whose canonical text is then already made.
    static func commitsDataAsSent(_ operation: SyncOperation, data: [String: JSONValue]) -> Bool {
        (operation.op == .create || operation.op == .update) && data.count == operation.data?.count
    }

    /// The result and answer text of an operation applied before, from what was remembered of it.
    /// - Parameter dataText: the operation's canonical data text (``SyncOperation/canonicalDataText``).
    static func replay(stored text: String, of operation: SyncOperation, dataText: String?) throws -> (OperationResult, String) {
        var result = try CairnJSON.decode(OperationResult.self, from: Array(text.utf8))
        // Remembered without its data exactly when the write committed the data as sent, which is the operation's
        // own (the fingerprint matched); otherwise the stored text is the whole answer.
        guard result.status == .applied, var record = result.record, !record.deleted, let sent = operation.data, let dataText,
              commitsDataAsSent(operation, data: BatchPlanner.stripNulls(sent)), let updatedAt = record.updatedAt
        else { return (result, text) }
        record.data = sent
        result.record = record
        return (result, appliedText(opId: operation.opId, record: record, dataText: dataText, updatedAt: RFC3339.string(from: updatedAt)))
    }

    /// The JSON of an `applied` result, assembled around data text already made; without `dataText`, the record has
    /// no `data` member.
    static func appliedText(opId: String?, record: Record, dataText: String?, updatedAt: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity((dataText?.utf8.count ?? 0) + 160)
        let text = RecordText(
            id: record.id, version: record.version, updatedAt: updatedAt, updatedBy: record.updatedBy ?? "", deleted: record.deleted,
            dataText: dataText)
        OperationResult.write(opId: opId, status: .applied, record: text, current: nil, error: nil, into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// An operation's canonical data text and fingerprint, made before the write transaction.
struct PreparedOperation: Sendable {
    let dataText: String?
    /// A digest of the operation and of who sends it: an opId another user used is theirs, and replaying it to
    /// someone else would hand over their answer (a record that user may not read).
    let fingerprint: String
    /// The text the fingerprints digest, without the sender.
    private let fingerprintText: String

    /// The digest of the operation alone, as operations were remembered before their sender counted; they are
    /// forgotten with the operations' retention. Made only for an opId remembered already.
    var legacyFingerprint: String { SchemaVersioning.digest(fingerprintText) }

    /// - Parameter sent: the operation as the client sent it, when `operation` is its translation to the current
    ///   schema: the fingerprint is the sent one's, so a retry answers the first result even after the schema changed.
    init(_ operation: SyncOperation, sent: SyncOperation? = nil, user: String) {
        dataText = operation.canonicalDataText
        fingerprintText = sent.map { $0.fingerprintText } ?? operation.fingerprintText(dataText: dataText)
        fingerprint = SchemaVersioning.digest("\(user)\n\(fingerprintText)")
    }
}
