import CairnProtocol
import Foundation

/// One batch: what was settled before its write transaction (translations, prepared texts, the caller's rules, its
/// files), each operation's decision (replay, plan, the row to write), made before the lock when the batch allows it,
/// and the steps under the lock: number, commit, remember.
struct BatchRun: Sendable {
    let schema: Schema
    let translation: BatchTranslation
    let prepared: [PreparedOperation]
    /// What the caller's data rules do not let it write; `nil` when none binds it.
    let writeGuard: WriteGuard?
    /// The caller's read filters in the collections the batch names in `reference` fields (none when unbound).
    let targetReadFilters: [String: Filter]
    /// Per collection, the rules that follow a reference to its fields (``FollowedReference/followers(in:)``).
    let followers: [String: [FollowedReference.Follower]]
    /// The files the batch names that the caller may not read.
    let hiddenFiles: Set<String>
    /// The files the batch names whose upload is complete.
    let completedFiles: Set<String>
    let now: Date

    /// What operation `index` does, from the stored states and remembered operations in `lookups`: a remembered
    /// opId's first answer, an answer that writes nothing, or a row to commit (prepared by `preparer`). No version
    /// is handed out here, so a batch decides before the project's write lock when it can (see ``BatchService``).
    func decide(_ index: Int, lookups: BatchLookups, preparer: inout RowPreparer) throws -> OperationDecision {
        let sent = translation.operations[index]
        var operation = sent
        // Only a valid opId is looked up or remembered: an invalid one is rejected by the planner and can never be
        // replayed, and storage need not be able to key it (a NUL character, say).
        if Names.isValidID(operation.opId), let stored = lookups.operation(operation.opId) {
            let (result, text) = try BatchAnswer.repeated(operation, prepared: prepared[index], remembered: stored)
            return .replayed(BatchAnswer(result: result, text: text))
        }
        // A record whose migration is not done is brought to the current shape before it is compared.
        let translator = translation.translators[index]
        let current = lookups.record(operation.collection, operation.id).map { translator.stored($0, collection: operation.collection) }
        if operation.op == .update, let data = operation.data, let current, !current.record.deleted {
            operation.data = translator.completingUpdate(data, stored: current.record.data, collection: operation.collection)
        }
        switch try plan(operation, current: current, refusal: translation.refusals[index], lookups: lookups) {
        case .write(let data, let deleted):
            // A create or update without top-level nulls commits the data as sent, whose text is made already.
            let asSent = BatchAnswer.commitsDataAsSent(sent, data: data)
            return .write(
                preparer.prepare(
                    collection: operation.collection, id: operation.id, data: data, dataText: asSent ? prepared[index].dataText : nil,
                    deleted: deleted, previous: current),
                dataAsSent: asSent)
        case .unchanged(let record):
            return .answered(BatchAnswer(result: .applied(operation.opId, record)))
        case .conflict(let record):
            return .answered(BatchAnswer(result: .conflict(operation.opId, current: record)))
        case .reject(let error):
            return .answered(BatchAnswer(result: .rejected(operation.opId, error)))
        }
    }

    /// Reads `reads` with `read`, and then the records the caller's rules follow references to from the stored
    /// records found (``WriteGuard/unreadTargets(of:reads:)``), if any: the snapshot the batch decides from, and all
    /// it read.
    func reading(
        _ reads: TransactionReads, with read: (TransactionReads) async throws -> TransactionSnapshot
    ) async throws -> (snapshot: TransactionSnapshot, reads: TransactionReads) {
        let snapshot = try await read(reads)
        guard let writeGuard, case let more = try writeGuard.unreadTargets(of: snapshot, reads: reads), !more.isEmpty else { return (snapshot, reads) }
        let all = RecordReferences.reads(more, adding: reads)
        return (try await read(all), all)
    }

    /// Carries out operation `index`'s decision under the lock: commits its row at the next version, remembers its
    /// answer for replays (a replay is not remembered again) and shapes it for the build that sent it.
    func commit(_ decision: OperationDecision, of index: Int, writer: inout RecordWriter, lookups: inout BatchLookups) async throws -> BatchAnswer {
        let operation = translation.operations[index]
        var answer: BatchAnswer
        switch decision {
        case .replayed(let replay):
            return replay
        case .answered(let decided):
            answer = decided
        case .write(let row, let dataAsSent):
            // Deleting a record others reference: their onDelete first decides whether it may go, and what follows it.
            var followUps: [ReferenceDeletion.FollowUp] = []
            if row.deleted, let previous = row.previous, !previous.record.deleted, !schema.references(to: row.collection).isEmpty {
                switch try await ReferenceDeletion(schema: schema).followUps(of: row.collection, id: row.id, in: writer.transaction) {
                case .failure(let refusal):
                    return try await remember(.init(result: .rejected(operation.opId, refusal)), of: index, writer: &writer, lookups: &lookups)
                case .success(let found):
                    followUps = found
                }
            }
            // A change to a field that other collections' rules follow re-judges the records naming this one.
            if !row.deleted, let previous = row.previous, !previous.record.deleted, let followers = followers[row.collection] {
                for follower in FollowedReference.touches(followers, from: previous.record.data, to: row.data) {
                    for referrer in try await writer.transaction.liveReferrers(collection: follower.collection, field: follower.reference, id: row.id) {
                        followUps.append(.init(collection: follower.collection, id: referrer, deleted: false, cleared: []))
                    }
                }
            }
            let written = try await writer.write(row)
            var state = written.state
            // A tombstone written here remembers what it replaced, as one read back would.
            if row.deleted, let previous = row.previous, !previous.record.deleted {
                state.lastLiveDataText = JSONValue.object(previous.record.data).jsonText()
            }
            lookups.wrote(state, collection: row.collection)
            try await apply(followUps, writer: &writer, lookups: &lookups)
            answer = .applied(operation.opId, written.state.record, row: written.row, dataAsSent: dataAsSent)
        }
        return try await remember(answer, of: index, writer: &writer, lookups: &lookups)
    }

    /// Writes the records a write changes through `reference` fields, each at its own next version, as ordinary
    /// changes: those a delete deletes or clears (``ReferenceDeletion``), and those whose rules follow a field that
    /// changed, written again as they are (``FollowedReference``).
    private func apply(_ followUps: [ReferenceDeletion.FollowUp], writer: inout RecordWriter, lookups: inout BatchLookups) async throws {
        guard !followUps.isEmpty else { return }
        let ids = Dictionary(grouping: followUps, by: \.collection).mapValues { $0.map(\.id) }
        let snapshot = try await writer.transaction.read(TransactionReads(records: ids))
        var preparer = RowPreparer(schema: schema)
        for followUp in followUps {
            guard let row = snapshot.records[followUp.collection]?.first(where: { $0.id == followUp.id }), !row.deleted else { continue }
            let current = try StoredRecordState(row)
            var data = current.record.data
            for field in followUp.cleared { data.removeValue(forKey: field) }
            let prepared = preparer.prepare(
                collection: followUp.collection, id: followUp.id, data: followUp.deleted ? [:] : data, deleted: followUp.deleted, previous: current)
            var state = try await writer.write(prepared).state
            if followUp.deleted { state.lastLiveDataText = row.dataText }
            lookups.wrote(state, collection: followUp.collection)
        }
    }

    /// Remembers operation `index`'s answer for replays (a replay is not remembered again) and shapes it for the build
    /// that sent it.
    private func remember(_ decided: BatchAnswer, of index: Int, writer: inout RecordWriter, lookups: inout BatchLookups) async throws -> BatchAnswer {
        let operation = translation.operations[index]
        var answer = decided
        if Names.isValidID(operation.opId) {
            let remembered = RememberedOperation(
                opId: operation.opId, fingerprint: prepared[index].fingerprint, result: answer.storedText,
                tag: operation.tag.flatMap { SyncOperation.isValidTag($0) ? $0 : nil })
            try await writer.transaction.rememberOperation(remembered, at: now)
            lookups.remembered(remembered)
        }
        translation.shapeForSender(&answer, collection: operation.collection)
        return answer
    }

    /// What `operation` does: refused when it could not be translated, when the caller's rules refuse the record as
    /// stored (or it is a tombstone the caller may not see), when its files are not complete or not readable, or
    /// when a `reference` field comes to name a record that is not there or not readable (``RecordReferences``), or
    /// when the rules refuse the record as changed; else ``BatchPlanner``'s plan.
    func plan(_ operation: SyncOperation, current: StoredRecordState?, refusal: ErrorBody?, lookups: BatchLookups) throws -> BatchPlan {
        if let refusal { return .reject(refusal) }
        // A record the caller may not write is refused before anything of it is compared or answered.
        if let writeGuard, let current {
            if !current.record.deleted,
                let refusal = try writeGuard.refusal(
                    collection: operation.collection, id: operation.id, data: current.record.data, state: "as stored", lookups: lookups)
            {
                return .reject(refusal)
            }
            if operation.op != .create,
                let hidden = try writeGuard.hiddenTombstone(collection: operation.collection, id: operation.id, current, lookups: lookups)
            {
                return .reject(hidden)
            }
        }
        let collection = schema.collection(named: operation.collection)
        let plan = BatchPlanner.plan(operation, current: current, collection: collection)
        guard case .write(let data, false) = plan else { return plan }
        if let problem = FileReferences.problem(data, previous: current, collection: collection, completed: completedFiles)
            ?? FileReferences.unreadable(data, previous: current, collection: collection, hidden: hiddenFiles)
        {
            return .reject(problem)
        }
        if let problem = try RecordReferences.problem(data, previous: current, collection: collection, lookups: lookups, mayRead: { target, id, data in
            guard let filter = targetReadFilters[target], let targetSchema = schema.collection(named: target) else { return true }
            return try RecordFilterEvaluator.shared().matches(filter, collection: targetSchema, id: id, dataText: JSONValue.object(data).jsonText())
        }) {
            return .reject(problem)
        }
        if let writeGuard,
            let refusal = try writeGuard.refusal(collection: operation.collection, id: operation.id, data: data, state: "as changed", lookups: lookups)
        {
            return .reject(refusal)
        }
        return plan
    }
}

/// What one operation of a batch does, decided without handing out a version.
enum OperationDecision: Sendable {
    /// The opId was remembered: its first answer (or `idempotency_mismatch`), not remembered again.
    case replayed(BatchAnswer)
    /// An answer that writes nothing: a conflict, a refusal, or deleting a tombstone.
    case answered(BatchAnswer)
    /// A row to commit at the next version; `dataAsSent` when it commits the operation's data exactly as sent.
    case write(PreparedRow, dataAsSent: Bool)
}
