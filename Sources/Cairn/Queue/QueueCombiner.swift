import CairnProtocol

/// The rules that fold a new local change into a queued one that was never uploaded, so the server sees the
/// net effect: create+patch is one create, create+delete is nothing, patch+patch is one patch.
///
/// A pure function, tested without a store.
enum QueueCombiner {
    /// A change as the combiner sees it.
    struct Change: Sendable, Hashable {
        var kind: OperationKind
        var data: [String: JSONValue]?

        init(_ kind: OperationKind, _ data: [String: JSONValue]? = nil) {
            self.kind = kind
            self.data = data
        }
    }

    /// What to do with the queue.
    enum Outcome: Sendable, Hashable {
        /// Replace the queued change (keeping its opId and base version) with this one.
        case replace(Change)
        /// Drop the queued change: together they do nothing.
        case remove
        /// Queue the new change on its own.
        case append(Change)
    }

    /// Whether a new change may fold into the record's newest queued change: only when that one was never uploaded
    /// and both belong to the same change set, or both to none. A set's writes combine with each other; a change made
    /// outside a set never folds into a set's operation (the set would upload it, all or nothing, as its own), and
    /// a set's write never folds into an outside change (the set would lose it): either is queued after the other.
    static func mayCombine(queuedAttempts: Int, queuedChangeSet: String?, newChangeSet: String?) -> Bool {
        queuedAttempts == 0 && queuedChangeSet == newChangeSet
    }

    /// Folds `new` into `queued` (a change never uploaded), or appends it when there is none.
    /// - Parameter localData: the record's data once `new` is applied locally: used when two patches cannot be
    ///   composed into one exactly (a patch that sets an object where the first patch set a scalar or removed it).
    static func combine(_ queued: Change?, _ new: Change, localData: [String: JSONValue]) -> Outcome {
        guard let queued else { return .append(new) }
        switch (queued.kind, new.kind) {
        case (.create, .delete):
            return .remove
        case (.create, .patch):
            return .replace(Change(.create, merged(queued.data, new.data)))
        case (.create, _):
            return .replace(Change(.create, new.data))
        case (.update, .patch):
            return .replace(Change(.update, merged(queued.data, new.data)))
        case (.patch, .patch):
            if let patch = composed(queued.data ?? [:], new.data ?? [:]) { return .replace(Change(.patch, patch)) }
            return .replace(Change(.update, localData))
        case (.delete, .create), (.delete, .update), (.delete, .patch):
            // Deleted then made again: a full replace of the server's record.
            return .replace(Change(.update, new.kind == .patch ? merged([:], new.data) : new.data))
        case (_, .delete):
            return .replace(Change(.delete))
        case (_, .update), (_, .create):
            return .replace(Change(.update, new.data))
        }
    }

    /// `data` with a merge patch applied.
    static func merged(_ data: [String: JSONValue]?, _ patch: [String: JSONValue]?) -> [String: JSONValue] {
        var result = data ?? [:]
        JSONValue.merge(&result, patch ?? [:])
        return result
    }

    /// One merge patch with the effect of `first` then `second` (RFC 7396 composition), or `nil` when no single
    /// patch has that effect on every document.
    static func composed(_ first: [String: JSONValue], _ second: [String: JSONValue]) -> [String: JSONValue]? {
        var result = first
        for (key, value) in second {
            guard case .object(let inner) = value else {
                result[key] = value
                continue
            }
            switch result[key] {
            case nil:
                result[key] = value
            case .object(let earlier)?:
                guard let nested = composed(earlier, inner) else { return nil }
                result[key] = .object(nested)
            default:
                // `first` replaced the member with a scalar or removed it; `second` merges into that, which a
                // patch applied to the original member cannot express.
                return nil
            }
        }
        return result
    }
}
