import CairnProtocol
import Foundation

/// One batch inside its write transaction: what was decided before the lock (translations, prepared texts, the
/// caller's rules, its files), and the steps each operation takes under it: replay, plan, commit, remember.
struct BatchRun: Sendable {
    let schema: Schema
    let translation: BatchTranslation
    let prepared: [PreparedOperation]
    /// What the caller's data rules do not let it write; `nil` when none binds it.
    let writeGuard: WriteGuard?
    /// The files the batch names that the caller may not read.
    let hiddenFiles: Set<String>
    /// The files the batch names whose upload is complete.
    let completedFiles: Set<String>
    let now: Date

    /// Answers operation `index`: a remembered opId's first answer, else what its plan commits, remembered for
    /// replays and shaped for the build that sent it.
    func answer(_ index: Int, writer: inout RecordWriter, lookups: inout BatchLookups) async throws -> BatchAnswer {
        let sent = translation.operations[index]
        var operation = sent
        // Only a valid opId is looked up or remembered: an invalid one is rejected by the planner and can never be
        // replayed, and storage need not be able to key it (a NUL character, say).
        let rememberable = Names.isValidID(operation.opId)
        if rememberable, let stored = lookups.operation(operation.opId) {
            let (result, text) = try BatchAnswer.repeated(operation, prepared: prepared[index], remembered: stored)
            return BatchAnswer(result: result, text: text)
        }
        // A record whose migration is not done is brought to the current shape before it is compared.
        let translator = translation.translators[index]
        let current = lookups.record(operation.collection, operation.id).map { translator.stored($0, collection: operation.collection) }
        if operation.op == .update, let data = operation.data, let current, !current.record.deleted {
            operation.data = translator.completingUpdate(data, stored: current.record.data, collection: operation.collection)
        }
        let plan = try plan(operation, current: current, refusal: translation.refusals[index])
        var answer = try await commit(plan, of: operation, sent: sent, prepared: prepared[index], current: current, writer: &writer, lookups: &lookups)
        if rememberable {
            let remembered = RememberedOperation(opId: operation.opId, fingerprint: prepared[index].fingerprint, result: answer.storedText)
            try await writer.transaction.rememberOperation(remembered, at: now)
            lookups.remembered(remembered)
        }
        translation.shapeForSender(&answer, collection: operation.collection)
        return answer
    }

    /// What `operation` does: refused when it could not be translated, when the caller's rules refuse the record as
    /// stored (or it is a tombstone the caller may not see), when its files are not complete or not readable, or
    /// when the rules refuse the record as changed; else ``BatchPlanner``'s plan.
    func plan(_ operation: SyncOperation, current: StoredRecordState?, refusal: ErrorBody?) throws -> BatchPlan {
        if let refusal { return .reject(refusal) }
        // A record the caller may not write is refused before anything of it is compared or answered.
        if let writeGuard, let current {
            if !current.record.deleted,
                let refusal = try writeGuard.refusal(collection: operation.collection, id: operation.id, data: current.record.data, state: "as stored")
            {
                return .reject(refusal)
            }
            if operation.op != .create, let hidden = try writeGuard.hiddenTombstone(collection: operation.collection, id: operation.id, current) {
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
        if let writeGuard, let refusal = try writeGuard.refusal(collection: operation.collection, id: operation.id, data: data, state: "as changed") {
            return .reject(refusal)
        }
        return plan
    }

    /// Commits `plan`'s write at the next version, or answers what it decided without writing. `sent` is the
    /// operation as translated, before an update was completed with stored fields.
    func commit(
        _ plan: BatchPlan, of operation: SyncOperation, sent: SyncOperation, prepared: PreparedOperation, current: StoredRecordState?,
        writer: inout RecordWriter, lookups: inout BatchLookups
    ) async throws -> BatchAnswer {
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
            return .applied(operation.opId, written.state.record, row: written.row, dataAsSent: asSent)
        case .unchanged(let record):
            return BatchAnswer(result: .applied(operation.opId, record))
        case .conflict(let record):
            return BatchAnswer(result: .conflict(operation.opId, current: record))
        case .reject(let error):
            return BatchAnswer(result: .rejected(operation.opId, error))
        }
    }
}
