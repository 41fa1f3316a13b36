import CairnProtocol
import Foundation

/// The batch endpoint's rules around storage: idempotency (a remembered opId answers its first result, a reused one
/// `idempotency_mismatch`), ``BatchPlanner``'s decisions, versions through ``RecordWriter``, and atomic batches
/// rolled back whole. Every backend gets the same behaviour from its transaction primitives.
///
/// ```swift
/// let outcome = try await BatchService(storage: storage).apply(batch, project: "field", schema: schema, user: "alice", now: now)
/// ```
struct BatchService: Sendable {
    let storage: any ServerStorage
    /// The schema histories old app builds' operations are translated by.
    let evolution: SchemaEvolution

    /// An instance over `storage`, translating by `evolution` (a new one over the same storage by default).
    init(storage: any ServerStorage, evolution: SchemaEvolution? = nil) {
        self.storage = storage
        self.evolution = evolution ?? SchemaEvolution(storage: storage)
    }

    /// Applies `batch` in one project write transaction; `writeGuard` refuses what the caller's data rules do not let
    /// it write.
    /// - Parameter hiddenFiles: the files among those the batch names that the caller may not read.
    /// - Parameter schemaNumber: the schema number the caller's app build was made for (`Cairn-Schema-Version`;
    ///   `nil`: the current one): its operations are translated to the current shape and its answers back, and a
    ///   number below the project's minimum is `426 upgrade_required`. An operation's own `schemaVersion` overrides it.
    /// - Parameter minimalAnswers: the client's `Prefer: return=minimal`: an applied write that committed the data as
    ///   sent is answered without its data (the client has it), unless the answer is translated for an old build.
    func apply(
        _ batch: BatchRequest, project: String, schema: Schema, user: String, now: Date, writeGuard: WriteGuard? = nil,
        hiddenFiles: Set<String> = [], schemaNumber: Int? = nil, minimalAnswers: Bool = false
    ) async throws -> BatchOutcome {
        let history = try await evolution.history(project: project, current: schema)
        let requestTranslator = try history.translator(for: schemaNumber)
        var operations = batch.operations
        var translators: [SchemaTranslator] = []
        var byNumber: [Int64: SchemaTranslator] = [:]
        var refusals: [Int: ErrorBody] = [:]
        for (index, operation) in batch.operations.enumerated() {
            var translator = requestTranslator
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
        // Data texts and fingerprints are made before the write lock is taken (a translated operation's fingerprint
        // is the one sent).
        let prepared = operations.indices.map { index in
            PreparedOperation(operations[index], sent: translators[index].isOldBuild ? batch.operations[index] : nil, user: user)
        }
        let fileIDs = FileReferences.ids(operations, schema: schema)
        let completedFiles = fileIDs.isEmpty ? [] : try await storage.completedFiles(project: project, ids: fileIDs)
        let ended = try await storage.withProjectWriteTransaction(project: project) { transaction -> TransactionEnd<CommittedAnswers> in
            let snapshot = try await transaction.read(BatchLookups.reads(operations))
            var writer = RecordWriter(transaction, head: snapshot.headVersion, user: user, now: now, schema: schema)
            var lookups = try BatchLookups(snapshot)
            var answers: [BatchAnswer] = []
            answers.reserveCapacity(operations.count)

            for (index, (sent, prepared)) in zip(operations, prepared).enumerated() {
                var operation = sent
                let translator = translators[index]
                // Only a valid opId is looked up or remembered: an invalid one is rejected by the planner and can
                // never be replayed, and storage need not be able to key it (a NUL character, say).
                let rememberable = Names.isValidID(operation.opId)
                if rememberable, let stored = lookups.operation(operation.opId) {
                    let (result, text) = try BatchAnswer.repeated(operation, prepared: prepared, remembered: stored)
                    answers.append(BatchAnswer(result: result, text: text))
                    continue
                }
                // A record whose migration is not done is brought to the current shape before it is compared.
                let current = lookups.record(operation.collection, operation.id).map { translator.stored($0, collection: operation.collection) }
                if operation.op == .update, let data = operation.data, let current, !current.record.deleted {
                    operation.data = translator.completingUpdate(data, stored: current.record.data, collection: operation.collection)
                }
                var answer: BatchAnswer
                let collection = schema.collection(named: operation.collection)
                var plan: BatchPlan
                // A record the caller may not write is refused before anything of it is compared or answered.
                if let refusal = refusals[index] {
                    plan = .reject(refusal)
                } else if let writeGuard, let current, !current.record.deleted,
                    let refusal = try writeGuard.refusal(collection: operation.collection, id: operation.id, data: current.record.data, state: "as stored")
                {
                    plan = .reject(refusal)
                } else if let writeGuard, let current, operation.op != .create,
                    let hidden = try writeGuard.hiddenTombstone(collection: operation.collection, id: operation.id, current)
                {
                    plan = .reject(hidden)
                } else {
                    plan = BatchPlanner.plan(operation, current: current, collection: collection)
                }
                if case .write(let data, false) = plan,
                    let problem = FileReferences.problem(data, previous: current, collection: collection, completed: completedFiles)
                        ?? FileReferences.unreadable(data, previous: current, collection: collection, hidden: hiddenFiles)
                {
                    plan = .reject(problem)
                }
                if case .write(let data, false) = plan, let writeGuard,
                    let refusal = try writeGuard.refusal(collection: operation.collection, id: operation.id, data: data, state: "as changed")
                {
                    plan = .reject(refusal)
                }
                switch plan {
                case .write(let data, let deleted):
                    // A create or update without top-level nulls commits the data as sent, whose text is made already.
                    let asSent = BatchAnswer.commitsDataAsSent(sent, data: data)
                    let written = try await writer.write(
                        collection: operation.collection, id: operation.id, data: data, dataText: asSent ? prepared.dataText : nil,
                        deleted: deleted, previous: current)
                    var state = written.state
                    // A tombstone written here remembers what it replaced, as one read back would.
                    if deleted, let current, !current.record.deleted { state.lastLiveDataText = JSONValue.object(current.record.data).jsonText() }
                    lookups.wrote(state, collection: operation.collection)
                    answer = .applied(operation.opId, written.state.record, row: written.row, dataAsSent: asSent)
                case .unchanged(let record):
                    answer = BatchAnswer(result: .applied(operation.opId, record))
                case .conflict(let record):
                    answer = BatchAnswer(result: .conflict(operation.opId, current: record))
                case .reject(let error):
                    answer = BatchAnswer(result: .rejected(operation.opId, error))
                }
                if rememberable {
                    let remembered = RememberedOperation(opId: operation.opId, fingerprint: prepared.fingerprint, result: answer.storedText)
                    try await transaction.rememberOperation(remembered, at: now)
                    lookups.remembered(remembered)
                }
                if requestTranslator.isOldBuild || !requestTranslator.pending.isEmpty {
                    // The answer in the shape of the build that sent the batch (an operation it queued under an older
                    // build included).
                    var result = answer.result
                    if let record = result.record {
                        result.record?.data = requestTranslator.outgoing(record.data, collection: operation.collection)
                    }
                    if let current = result.current {
                        result.current?.data = requestTranslator.outgoing(current.data, collection: operation.collection)
                    }
                    answer.result = result
                    answer.translatedText = result.jsonText
                }
                answers.append(answer)
            }

            if batch.atomic, answers.contains(where: { $0.result.status != .applied }) {
                return .rollback(CommittedAnswers(answers: answers, changedCollections: [:], committed: false))
            }
            try await writer.finish()
            return .commit(CommittedAnswers(answers: answers, changedCollections: writer.changedCollections, committed: true))
        }
        let results = ended.answers.map(\.result)
        guard ended.committed else {
            return BatchOutcome.aborted(results, failedAt: results.firstIndex { $0.status != .applied } ?? 0)
        }
        // The answers' texts are made once the project's write lock is released.
        return BatchOutcome(
            results: results, resultTexts: ended.answers.map { $0.text(minimal: minimalAnswers) }, changedCollections: ended.changedCollections)
    }

    /// What the write transaction decided, whose texts are made after it.
    private struct CommittedAnswers: Sendable {
        var answers: [BatchAnswer]
        var changedCollections: [String: Int64]
        var committed: Bool
    }
}

/// What a batch did.
struct BatchOutcome: Sendable {
    var results: [OperationResult]
    /// Each result as the JSON text sent back (and, but for applied data, stored for replay), in order; without the
    /// data of writes committed as sent when the client asked for minimal answers.
    var resultTexts: [String]
    /// For live notices: the highest new version per changed collection.
    var changedCollections: [String: Int64]

    /// The answer of an atomic batch rolled back because operation `failed` did not apply: the operations that
    /// would have applied say `batch_aborted`; nothing is remembered.
    static func aborted(_ results: [OperationResult], failedAt failed: Int) -> BatchOutcome {
        let answered = results.map { result in
            result.status == .applied
                ? .rejected(result.opId, ErrorBody(
                    code: .batchAborted,
                    message: "not applied: the atomic batch was rolled back because operation \(failed) (\(results[failed].opId)) failed"))
                : result
        }
        return BatchOutcome(results: answered, resultTexts: answered.map(\.jsonText), changedCollections: [:])
    }
}
