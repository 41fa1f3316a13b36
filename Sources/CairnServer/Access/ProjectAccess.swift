import CairnProtocol

/// Who is calling, and what they may do in one project: the signed-in identity and the role ``AccessControl``
/// derived for it. Handlers receive it from ``ProjectRoutes``; nothing else builds one.
struct ProjectAccess: Sendable {
    /// Who signed the request in (Cairn's own token or an identity provider's JWT).
    let identity: SignedInUser
    /// The project of the route.
    let project: String
    /// The caller's role in ``project`` when the access was decided.
    let role: Role

    /// The caller's user name.
    var user: String { identity.user }

    /// Whether the project's data rules bind the caller (``Role/isBoundByRules``).
    var isBound: Bool { role.isBoundByRules }
}

extension Role {
    /// Whether a project's data rules bind a member with this role: every role but `admin`. The one place this is
    /// decided; ``RuleSubject/isBound`` and ``ProjectAccess/isBound`` read it.
    var isBoundByRules: Bool { self != .admin }
}

extension Schema {
    /// Whether any collection of the project has a read rule: without one, every member reads every record and file.
    var hasReadRules: Bool { collections.contains { $0.rules?.read != nil } }

    /// Whether any collection of the project has data rules at all.
    var hasRules: Bool { collections.contains { $0.rules != nil } }
}
