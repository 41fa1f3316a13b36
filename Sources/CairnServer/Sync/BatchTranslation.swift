import CairnProtocol

/// A batch's operations in the current schema's shape: each translated from the shape of the app build that queued
/// it (its own `schemaVersion`, else the batch's `Cairn-Schema-Version`), or refused when it cannot be; and the way
/// back, for the answers.
struct BatchTranslation: Sendable {
    /// The translator of the build that sent the batch, which shapes the answers.
    let request: SchemaTranslator
    /// The operations translated, in order (one that could not be stays as sent, and is refused).
    private(set) var operations: [SyncOperation]
    /// Each operation's translator, in order.
    private(set) var translators: [SchemaTranslator] = []
    /// Why operations could not be translated, by index.
    private(set) var refusals: [Int: ErrorBody] = [:]

    /// Translates `batch` by `history`; a `schemaNumber` below the project's minimum is `426 upgrade_required`.
    init(_ batch: BatchRequest, history: SchemaHistory, schemaNumber: Int?) throws {
        request = try history.translator(for: schemaNumber)
        operations = batch.operations
        var byNumber: [Int64: SchemaTranslator] = [:]
        for (index, operation) in batch.operations.enumerated() {
            var translator = request
            if let number = operation.schemaVersion {
                // A change queued by an older build is translated from its shape, whatever the window.
                translator = try byNumber[number] ?? history.translator(for: Int(clamping: number), enforcingWindow: false)
                byNumber[number] = translator
            }
            translators.append(translator)
            switch translator.incoming(operation) {
            case .success(let translated): operations[index] = translated
            case .failure(let refusal): refusals[index] = refusal
            }
        }
    }

    /// Each operation's data text and fingerprints, made before the write lock is taken; a translated operation's
    /// fingerprint is that of the operation `batch` sent.
    func prepared(_ batch: BatchRequest, user: String) -> [PreparedOperation] {
        operations.indices.map { index in
            PreparedOperation(operations[index], sent: translators[index].isOldBuild ? batch.operations[index] : nil, user: user)
        }
    }

    /// `answer` in the shape of the build that sent the batch (an operation it queued under an older build included).
    func shapeForSender(_ answer: inout BatchAnswer, collection: String) {
        guard request.isOldBuild || !request.pending.isEmpty else { return }
        var result = answer.result
        if let record = result.record { result.record?.data = request.outgoing(record.data, collection: collection) }
        if let current = result.current { result.current?.data = request.outgoing(current.data, collection: collection) }
        answer.result = result
        answer.translatedText = result.jsonText
    }
}
