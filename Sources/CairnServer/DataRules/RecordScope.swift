import CairnProtocol
import Crypto
import Foundation

/// What one user may read and write in one collection: the collection's rules with the user's values bound
/// (``RuleBinding``). `nil` filters mean "every record": the collection has no such rule, or the user is the
/// project's `admin`.
///
/// ```swift
/// let scope = RecordScope(collection: jobs, subject: RuleSubject(user: "ana", role: .writer, claims: claims))
/// scope.read    // {"or": [{"field": "assignee", "op": "eq", "value": "ana"}, ...]}
/// ```
struct RecordScope: Sendable, Hashable {
    /// The records the user may read.
    let read: Filter?
    /// The records the user may write: those the write rule and the read rule both match.
    let write: Filter?

    /// The scope of `subject` in `collection`.
    init(collection: CollectionSchema, subject: RuleSubject) {
        guard subject.isBound, let rules = collection.rules else {
            self.init(read: nil, write: nil)
            return
        }
        let read = rules.read.map { RuleBinding.bind($0, collection: collection, for: subject) }
        let write = rules.write.map { RuleBinding.bind($0, collection: collection, for: subject) }
        switch (read, write) {
        case (nil, nil): self.init(read: nil, write: nil)
        case (let read?, nil): self.init(read: read, write: read)
        case (nil, let write?): self.init(read: nil, write: write)
        case (let read?, let write?): self.init(read: read, write: .and([write, read]))
        }
    }

    /// A scope with these filters.
    init(read: Filter?, write: Filter?) {
        self.read = read
        self.write = write
    }

    /// A short digest of ``read`` that cursors carry, so a pull notices when what the user may read changed (the
    /// rules, the user's claims or role); `nil` when the user reads everything.
    var readFingerprint: String? { read.map(Self.fingerprint) }

    /// The first 16 bytes of the SHA-256 of the filter's canonical JSON, as hex.
    static func fingerprint(_ filter: Filter) -> String {
        Hex.encode(SHA256.hash(data: Data(filter.jsonValue.jsonText().utf8)).prefix(16))
    }

    /// `filter` narrowed to what the user may read: both must match.
    func narrowing(_ filter: Filter?) -> Filter? {
        switch (filter, read) {
        case (nil, nil): nil
        case (let filter?, nil): filter
        case (nil, let read?): read
        case (let filter?, let read?): .and([filter, read])
        }
    }
}
