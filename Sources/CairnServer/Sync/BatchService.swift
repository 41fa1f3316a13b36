import CairnProtocol
import Foundation

/// The batch endpoint's rules around storage: the caller's data rules, idempotency (a remembered opId answers its
/// first result, a reused one `idempotency_mismatch`), ``BatchPlanner``'s decisions, versions through
/// ``RecordCommits`` (which announces what committed), and atomic batches rolled back whole. Every backend gets the
/// same behaviour from its transaction primitives.
///
/// ```swift
/// let outcome = try await BatchService(storage: storage).apply(batch, project: "field", schema: schema, user: "alice", now: now)
/// ```
struct BatchService: Sendable {
    let storage: any ServerStorage
    /// The schema histories old app builds' operations are translated by.
    let evolution: SchemaEvolution
    /// How a batch commits, and who hears of it.
    let commits: RecordCommits
    /// The caller's data rules.
    let access: AccessControl
    /// Where pushed operations are counted, when anywhere.
    let metrics: ServerMetrics?
    /// Runs after a batch decided before the lock and before it takes it: tests commit another batch here.
    var beforeLock: (@Sendable () async throws -> Void)?

    /// An instance over `storage`, translating by `evolution` (a new one over the same storage by default), telling
    /// `notifier`'s listeners of what commits and counting pushes in `metrics`.
    init(storage: any ServerStorage, evolution: SchemaEvolution? = nil, notifier: ChangeNotifier? = nil, metrics: ServerMetrics? = nil) {
        self.storage = storage
        self.evolution = evolution ?? SchemaEvolution(storage: storage)
        self.commits = RecordCommits(storage: storage, notifier: notifier)
        self.access = AccessControl(storage: storage)
        self.metrics = metrics
    }

    /// A writer's push: ``apply(_:project:schema:user:now:writeGuard:targetReadFilters:hiddenFiles:schemaNumber:minimalAnswers:positionalAnswers:)``
    /// bound by the caller's data rules (what it may write, the files it may not read), counted in the metrics.
    func push(
        _ batch: BatchRequest, caller: ProjectAccess, now: Date, schemaNumber: Int?, minimalAnswers: Bool, positionalAnswers: Bool = false
    ) async throws -> BatchOutcome {
        let schema = try await access.schema(caller)
        let outcome = try await apply(
            batch, project: caller.project, schema: schema, user: caller.user, now: now,
            writeGuard: try await access.writeGuard(caller, schema: schema, collections: Set(batch.operations.map(\.collection))),
            targetReadFilters: try await access.readFilters(
                caller, schema: schema, collections: Set(RecordReferences.targets(batch.operations, schema: schema).keys)),
            hiddenFiles: try await access.hiddenFiles(FileReferences.ids(batch.operations, schema: schema), caller),
            schemaNumber: schemaNumber, minimalAnswers: minimalAnswers, positionalAnswers: positionalAnswers)
        metrics?.pushed(outcome.results)
        return outcome
    }

    /// Applies `batch` in one project write transaction; `writeGuard` refuses what the caller's data rules do not let
    /// it write.
    /// - Parameter hiddenFiles: the files among those the batch names that the caller may not read.
    /// - Parameter schemaNumber: the schema number the caller's app build was made for (`Cairn-Schema-Version`;
    ///   `nil`: the current one): its operations are translated to the current shape and its answers back, and a
    ///   number below the project's minimum is `426 upgrade_required`. An operation's own `schemaVersion` overrides it.
    /// - Parameter positionalAnswers: the client's `Prefer: results=positional` beside `return=minimal`: such a write
    ///   is answered without its opId too.
    /// - Parameter minimalAnswers: the client's `Prefer: return=minimal`: an applied write that committed the data as
    ///   sent is answered without its data (the client has it), unless the answer is translated for an old build.
    /// - Parameter targetReadFilters: the caller's read filters in the collections the batch names in `reference`
    ///   fields: it may only name records they let it read.
    func apply(
        _ batch: BatchRequest, project: String, schema: Schema, user: String, now: Date, writeGuard: WriteGuard? = nil,
        targetReadFilters: [String: Filter] = [:], hiddenFiles: Set<String> = [], schemaNumber: Int? = nil, minimalAnswers: Bool = false,
        positionalAnswers: Bool = false
    ) async throws -> BatchOutcome {
        let translation = try BatchTranslation(
            batch, history: try await evolution.history(project: project, current: schema), schemaNumber: schemaNumber)
        let fileIDs = FileReferences.ids(translation.operations, schema: schema)
        let followers = FollowedReference.followers(in: schema)
        let run = BatchRun(
            schema: schema, translation: translation, prepared: translation.prepared(batch, user: user), writeGuard: writeGuard,
            targetReadFilters: targetReadFilters, followers: followers,
            hiddenFiles: hiddenFiles, completedFiles: fileIDs.isEmpty ? [] : try await storage.completedFiles(project: project, ids: fileIDs),
            now: now)
        let targets = RecordReferences.targets(translation.operations, schema: schema)
        let reads = RecordReferences.reads(targets, adding: BatchLookups.reads(translation.operations))
        let early = RecordReferences.decidesUnderLock(translation.operations, targets: targets, followed: Set(followers.keys), schema: schema)
            ? nil : try await decideEarly(run, reads: reads, project: project)
        let ended = try await commits.write(
            project: project, user: user, now: now, schema: schema,
            read: { transaction -> LockedRead in
                if let early { return .versions(try await transaction.versions(early.reads)) }
                return .snapshot(try await run.reading(reads, with: transaction.read).snapshot)
            }, head: \.headVersion
        ) { found, writer -> TransactionEnd<[BatchAnswer]> in
            var answers: [BatchAnswer] = []
            answers.reserveCapacity(batch.operations.count)
            if case .versions(let versions) = found, let early, versions.agree(with: early.versions, reads: early.reads) {
                // Nothing the batch read changed since it decided: only versions are handed out under the lock.
                var lookups = BatchLookups()
                for (index, decision) in early.decisions.enumerated() {
                    answers.append(try await run.commit(decision, of: index, writer: &writer, lookups: &lookups))
                }
            } else {
                // Decided under the lock, each operation after the one before it committed: a batch that touches a
                // record twice, or one whose records or opIds changed after it decided (it decides again).
                if early != nil { metrics?.batchDecidedAgain() }
                let snapshot: TransactionSnapshot
                if let read = found.snapshot { snapshot = read } else { snapshot = try await run.reading(reads, with: writer.transaction.read).snapshot }
                var lookups = try BatchLookups(snapshot)
                var preparer = RowPreparer(schema: run.schema)
                for index in translation.operations.indices {
                    let decision = try run.decide(index, lookups: lookups, preparer: &preparer)
                    answers.append(try await run.commit(decision, of: index, writer: &writer, lookups: &lookups))
                }
            }
            let aborted = batch.atomic && answers.contains { $0.result.status != .applied }
            return aborted ? .rollback(answers) : .commit(answers)
        }
        let results = ended.value.map(\.result)
        if batch.atomic, let failed = results.firstIndex(where: { $0.status != .applied }) {
            return BatchOutcome.aborted(results, failedAt: failed)
        }
        // The answers' texts are made once the project's write lock is released.
        return BatchOutcome(
            results: results, resultTexts: ended.value.map { $0.text(minimal: minimalAnswers, positional: positionalAnswers) }, changedCollections: ended.changes)
    }
}

extension BatchService {
    /// Decides every operation of a batch that names each record and opId once, from a snapshot read without the
    /// project's write lock: reading the stored states, the conflict checks, merges, rule checks and encoding all
    /// happen here, beside other batches' commits. `nil` for a batch that must decide under the lock.
    func decideEarly(_ run: BatchRun, reads: TransactionReads, project: String) async throws -> EarlyDecisions? {
        guard BatchLookups.touchesEachOnce(run.translation.operations) else { return nil }
        let (snapshot, allReads) = try await run.reading(reads) { try await storage.readCommitted(project: project, $0) }
        let lookups = try BatchLookups(snapshot)
        var preparer = RowPreparer(schema: run.schema)
        let decisions = try run.translation.operations.indices.map { try run.decide($0, lookups: lookups, preparer: &preparer) }
        try await beforeLock?()
        return EarlyDecisions(versions: TransactionVersions(snapshot), reads: allReads, decisions: decisions)
    }
}

/// A batch's decisions made before the project's write lock, and the versions of what they read: under the lock the
/// batch re-checks those versions, and decides again if any changed.
struct EarlyDecisions: Sendable {
    let versions: TransactionVersions
    /// What the batch read: its records, the records they name, and those its rules follow from stored records.
    let reads: TransactionReads
    let decisions: [OperationDecision]
}

/// What a batch reads first under the lock: the versions of what it decided from, or, when it decides there, the
/// whole snapshot.
enum LockedRead {
    case versions(TransactionVersions)
    case snapshot(TransactionSnapshot)

    var headVersion: Int64 {
        switch self {
        case .versions(let versions): versions.headVersion
        case .snapshot(let snapshot): snapshot.headVersion
        }
    }

    var snapshot: TransactionSnapshot? {
        if case .snapshot(let snapshot) = self { return snapshot }
        return nil
    }
}

/// What a batch did.
struct BatchOutcome: Sendable {
    var results: [OperationResult]
    /// Each result as the JSON text sent back (and, but for applied data, stored for replay), in order; without the
    /// data of writes committed as sent when the client asked for minimal answers.
    var resultTexts: [String]
    /// The highest new version per changed collection (announced to live listeners by ``RecordCommits`` already).
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
