import CairnProtocol
import Crypto
import Foundation
import NIOCore
import Synchronization

/// The changes feed's rules around storage: a snapshot pins its high mark at the head version its first page saw,
/// cursors move past every version handed out, a cursor older than the purged tombstones is `cursor_expired`
/// (410), changes that left the filter come back as `gone`, and a client's pull is noted once it reaches the end.
///
/// Under data rules a reader sees only what its ``RecordScope`` lets it read: a record that stops matching comes
/// back as `gone` (only to readers who may hold it), and when what the reader may read changes (the rules, its
/// claims or role), its next pull first catches up over the records it already pulled: those it may no longer read
/// come as `gone`, those it now may come whole, and the rest is not sent again.
///
/// ```swift
/// let page = try await ChangesFeed(storage: storage).page(project: "field", collection: notes, schemaVersion: schema.version,
///                                                         request: ChangesRequest(cursor: nil), scope: scope, clientID: nil, now: now)
/// ```
struct ChangesFeed: Sendable {
    let storage: any ServerStorage
    /// What this process already stored or read: the read filters of fingerprints, and the cursor key.
    let memory = FeedMemory()

    /// One page: the response body and where it leaves the reader.
    struct Page: Sendable {
        /// PROTOCOL.md's page object as JSON bytes.
        var body: ByteBuffer
        var cursor: FeedCursor
        var hasMore: Bool
        /// How many records (tombstones included) the page holds.
        var records: Int
    }

    /// Reads one page of `collection` for `request`, within what `scope` lets the reader read.
    /// - Parameter clientID: the caller's `Cairn-Client-ID`, noted when the page reaches the end of the feed.
    /// - Parameter translator: shapes the records for the caller's app build (its schema number), and brings those
    ///   whose migration is not done to the current shape.
    /// - Parameter user: the reader, whom the cursors are signed for: a cursor is honoured only from the reader it was
    ///   issued to, for the collection it was issued for (under data rules, a cursor from elsewhere could claim to hold
    ///   what the reader never could).
    func page(
        project: String, collection: CollectionSchema, schemaVersion: String, request: ChangesRequest, scope: RecordScope = RecordScope(read: nil, write: nil),
        user: String = "", clientID: String?, now: Date, translator: SchemaTranslator? = nil
    ) async throws -> Page {
        let fingerprint = scope.readFingerprint
        if let fingerprint, let read = scope.read { try await remember(read, fingerprint: fingerprint) }
        let key = try await cursorKey()
        let reader = Self.reader(project: project, collection: collection.name, user: user)
        if let given = request.cursor {
            if given.signature != nil {
                guard given.isSigned(with: key, for: reader) else { throw Self.expired("this cursor was issued to another reader or for another collection") }
            } else if fingerprint != nil {
                // Unsigned cursors come from before data rules bound this reader: it cannot show what the device holds.
                throw Self.expired("this cursor comes from before data rules applied to you")
            }
        }
        // A snapshot's first page lists every live record; its high mark is the head version read with it.
        var start = request.cursor ?? FeedCursor(since: 0, snapshotHigh: Int64.max, scope: fingerprint)
        if start.scope != fingerprint {
            // What the reader may read changed since the cursor was issued: catch up over what it pulled so far. A
            // snapshot cut short restarts (its client drops what the new snapshot does not hold).
            guard start.snapshotHigh == nil else { throw Self.expired("what you may read changed during a snapshot") }
            start = FeedCursor(since: 0, snapshotHigh: start.since, scope: fingerprint, previousScope: start.scope, isRescoping: true)
        }
        let selection = try await selection(start, scope: scope, filter: request.filter, collection: collection)
        var rows = try await storage.feedRange(
            project: project, collection: collection, since: start.since, snapshotHigh: start.snapshotHigh, limit: request.limit,
            selection: selection)
        if max(start.since, start.snapshotHigh == Int64.max ? 0 : start.snapshotHigh ?? 0) > rows.head {
            // Versions never go back: a cursor past the head comes from before this server was restored from a backup,
            // and the versions after the head will be handed out again, to other changes.
            throw Self.expired("this cursor is ahead of the server's latest change (it was restored from a backup made before)")
        }
        if let translator, !translator.isIdentity {
            for index in rows.rows.indices where !rows.rows[index].deleted {
                rows.rows[index].dataText = translator.outgoing(text: rows.rows[index].dataText, collection: collection.name)
            }
        }
        if rows.purgedThrough > max(start.since, start.snapshotHigh ?? 0) {
            throw Self.expired("this cursor is older than the tombstone retention horizon")
        }
        if let held = selection.held, rows.historyThrough > held.through {
            throw Self.expired("this cursor is older than the retention horizon of the states data rules judge it by")
        }
        let cursor = FeedCursor.after(start, rows: rows).signed(with: key, for: reader)
        // The caller's own writes, whose states it holds already, stay out of a pull of changes (after the cursor
        // moved past them): only a state committed at one of those versions is left out, never anyone else's. A
        // snapshot (and a catch-up after the reader's rules changed) lists every record it holds, own ones too.
        if start.snapshotHigh == nil, let own = request.own, !own.isEmpty {
            rows.rows.removeAll { own.contains($0.version) && ($0.deleted || $0.matchesFilter) }
        }
        // A snapshot's first page says how many records the snapshot holds, so clients can estimate the time left.
        let total: Int? = request.cursor != nil ? nil
            : rows.hasMore ? try await storage.liveCount(project: project, collection: collection, filter: selection.filter, limit: nil) : rows.rows.count
        // Noted once a pull reaches the end of the feed: a write per page would compete with batches.
        if !rows.hasMore, let clientID {
            try await storage.notePull(clientID: clientID, project: project, version: cursor.since, now: now)
        }
        return Page(
            body: Self.body(rows, cursor: cursor, schemaVersion: schemaVersion, total: total, schemaNumber: translator?.number),
            cursor: cursor, hasMore: rows.hasMore, records: rows.rows.count)
    }

    /// What a page from `start` lists. Without rules, every change after the cursor (as `gone` when it left the
    /// download query). Under rules, only changes the reader may hold; and during a catch-up after the reader's scope
    /// changed, the pulled records whose verdict changed.
    private func selection(_ start: FeedCursor, scope: RecordScope, filter: Filter?, collection: CollectionSchema) async throws -> FeedSelection {
        let readable = scope.narrowing(filter)
        guard scope.read != nil || start.isRescoping else { return FeedSelection(filter: readable) }
        guard start.isRescoping, let high = start.snapshotHigh else {
            return FeedSelection(filter: readable, held: FeedHolding(filter: readable, through: start.snapshotHigh ?? start.since))
        }
        let before = try await previousRead(start.previousScope, collection: collection)
        let pulled = RecordScope(read: before, write: nil).narrowing(filter)
        return FeedSelection(filter: readable, window: Self.difference(readable, pulled), held: FeedHolding(filter: pulled, through: high))
    }

    /// The records exactly one of the filters matches (`nil` matches every record).
    static func difference(_ now: Filter?, _ before: Filter?) -> Filter {
        let now = now ?? .and([]), before = before ?? .and([])
        return .or([.and([now, .not(before)]), .and([before, .not(now)])])
    }

    /// The read filter a cursor's previous fingerprint names; `cursor_expired` when this server does not know it.
    private func previousRead(_ fingerprint: String?, collection: CollectionSchema) async throws -> Filter? {
        guard let fingerprint else { return nil }
        guard let text = try await storage.readScope(fingerprint: fingerprint),
            let filter = try? JSONValueDecoder().decode(Filter.self, from: Array(text.utf8))
        else { throw Self.expired("this cursor names rules this server does not know") }
        return filter
    }

    /// Who a cursor is signed for.
    static func reader(project: String, collection: String, user: String) -> String { "\(project)\n\(collection)\n\(user)" }

    /// The key cursors are signed with: a secret the storage keeps, made by the first instance that needs it.
    private func cursorKey() async throws -> SymmetricKey {
        if let key = memory.cursorKey { return key }
        let text = try await storage.secret(named: "cursor-key") {
            var generator = SystemRandomNumberGenerator()
            return Hex.encode((0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) })
        }
        let key = SymmetricKey(data: Data(text.utf8))
        memory.cursorKey = key
        return key
    }

    /// Stores the read filter under its fingerprint, once per process.
    private func remember(_ read: Filter, fingerprint: String) async throws {
        guard memory.isNew(fingerprint) else { return }
        try await storage.rememberReadScope(fingerprint: fingerprint, filterText: read.jsonValue.jsonText())
        memory.insert(fingerprint)
    }

    static func expired(_ reason: String) -> ErrorBody {
        ErrorBody(
            code: .cursorExpired,
            message: "\(reason.prefix(1).uppercased() + reason.dropFirst()): pull a fresh snapshot (omit since) and drop local records not in it")
    }

    /// The collection's digest over the records the reader may read, with a cursor at the head version read with it
    /// (a client that matches it may continue from there).
    func digest(
        project: String, collection: CollectionSchema, scope: RecordScope = RecordScope(read: nil, write: nil), user: String = ""
    ) async throws -> DigestResponse {
        let live = try await storage.liveDigest(project: project, collection: collection, filter: scope.read)
        let digest = live.digest
        if let fingerprint = scope.readFingerprint, let read = scope.read { try await remember(read, fingerprint: fingerprint) }
        let cursor = FeedCursor(since: live.head, snapshotHigh: nil, scope: scope.readFingerprint)
            .signed(with: try await cursorKey(), for: Self.reader(project: project, collection: collection.name, user: user))
        return DigestResponse(cursor: cursor.token, count: digest.count, digest: digest.value)
    }
}

/// The fingerprints whose read filters this process stored already, and the cursor key once read.
final class FeedMemory: Sendable {
    private let known = Mutex<Set<String>>([])
    private let key = Mutex<SymmetricKey?>(nil)

    var cursorKey: SymmetricKey? {
        get { key.withLock { $0 } }
        set { key.withLock { $0 = newValue } }
    }

    func isNew(_ fingerprint: String) -> Bool { !known.withLock { $0.contains(fingerprint) } }
    func insert(_ fingerprint: String) { _ = known.withLock { $0.insert(fingerprint) } }
}

extension FeedCursor {
    /// The cursor after a page read from `start`. A snapshot keeps its high mark (pinned at the head version its
    /// first page read) until it passes it; a page that reached the end moves to the head version it read, which
    /// every later change exceeds.
    static func after(_ start: FeedCursor, rows: FeedRows) -> FeedCursor {
        let last = rows.rows.last?.version ?? start.since
        guard rows.hasMore else { return FeedCursor(since: max(last, rows.head), snapshotHigh: nil, scope: start.scope) }
        let high = start.snapshotHigh == Int64.max ? rows.head : start.snapshotHigh
        if let high, last < high {
            return FeedCursor(
                since: last, snapshotHigh: high, scope: start.scope, previousScope: start.previousScope, isRescoping: start.isRescoping)
        }
        return FeedCursor(since: last, snapshotHigh: nil, scope: start.scope)
    }
}
