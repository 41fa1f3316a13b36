import CairnProtocol

/// Which new local changes may fold into a record's queued change (SAP's `combineLocalUpdates` and
/// `combineLocalDeletes`): ``CairnConfiguration/combineLocalUpdates`` and ``CairnConfiguration/combineLocalDeletes``.
struct QueueCombining: Sendable, Hashable {
    /// A create, update or patch folds into the queued change (create+patch is one create).
    var updates: Bool
    /// A delete folds into the queued change (create+delete is nothing; update+delete is one delete).
    var deletes: Bool

    /// Every change folds when it may: the default.
    static let all = QueueCombining(updates: true, deletes: true)
    /// Nothing folds: each change is queued on its own.
    static let none = QueueCombining(updates: false, deletes: false)

    /// Whether a new change of this kind may fold into a queued one.
    func allows(_ kind: OperationKind) -> Bool { kind == .delete ? deletes : updates }
}
