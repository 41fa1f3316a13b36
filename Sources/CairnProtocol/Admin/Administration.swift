import Foundation

/// One page of an administration list (`GET /v1/admin/users`, `.../members`, `.../clients`...): its items in key
/// order and the key to pass as `?after=` for the next page, `null` on the last one.
///
/// ```swift
/// let page = try CairnJSON.decode(AdminPage<ProjectMember>.self, from: body)
/// if let next = page.next { /* GET ...?after=\(next) */ }
/// ```
public struct AdminPage<Item: Codable & Sendable & Hashable>: Codable, Sendable, Hashable {
    /// The items of this page, in key order.
    public var items: [Item]
    /// The key of the last item when more follow, else `nil` (written as `null`).
    public var next: String?

    /// A page of `items` followed by the page after `next`.
    public init(items: [Item], next: String?) {
        self.items = items
        self.next = next
    }

    enum CodingKeys: String, CodingKey { case items, next }

    /// Writes `next` as `null` on the last page rather than leaving it out.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(items, forKey: .items)
        try container.encode(next, forKey: .next)
    }
}

/// A user of the server, as operators list them.
public struct UserSummary: Codable, Sendable, Hashable {
    /// The user name.
    public var name: String
    /// Whether the user is a server operator (admin of every project, and of the server-wide routes).
    public var isOperator: Bool
    /// The user's projects with their roles, by project name.
    public var projects: [ProjectMembership]

    /// A user with these values.
    public init(name: String, isOperator: Bool, projects: [ProjectMembership]) {
        self.name = name
        self.isOperator = isOperator
        self.projects = projects
    }

    enum CodingKeys: String, CodingKey {
        case name, isOperator = "operator", projects
    }
}

/// A project of the server, as operators list them.
public struct ProjectSummary: Codable, Sendable, Hashable {
    /// The project name.
    public var name: String
    /// When it was created.
    public var createdAt: Date
    /// How many users are members.
    public var members: Int
    /// The version of its latest change (0 before the first).
    public var headVersion: Int64

    /// A project with these values.
    public init(name: String, createdAt: Date, members: Int, headVersion: Int64) {
        self.name = name
        self.createdAt = createdAt
        self.members = members
        self.headVersion = headVersion
    }
}

/// A member of a project and their role.
public struct ProjectMember: Codable, Sendable, Hashable {
    /// The user name.
    public var user: String
    /// The role the user holds in the project.
    public var role: Role
    /// The claims an operator set for the member, read by data rules as `claims.NAME` (`{}` when none).
    public var claims: [String: JSONValue]

    /// A member with this role and claims.
    public init(user: String, role: Role, claims: [String: JSONValue] = [:]) {
        self.user = user
        self.role = role
        self.claims = claims
    }
}

/// The body of `PUT /v1/projects/{project}/members/{user}`: the role to give.
public struct MemberRoleRequest: Codable, Sendable, Hashable {
    /// `reader`, `writer` or `admin`.
    public var role: Role

    /// A request for this role.
    public init(role: Role) { self.role = role }
}

/// A registered client (an app on a device) of a project, and how far it pulled.
public struct ClientSummary: Codable, Sendable, Hashable {
    /// The id the server gave it at registration.
    public var clientId: String
    /// The user who registered it.
    public var user: String
    /// The device name it registered with, if any.
    public var device: String?
    /// The app name it registered with, if any.
    public var app: String?
    /// When it registered.
    public var registeredAt: Date
    /// When it last pulled (its registration until then).
    public var lastSeenAt: Date
    /// The highest version it pulled to the end of (0 before its first full pull).
    public var lastPulledVersion: Int64
    /// How many versions the project's head is ahead of ``lastPulledVersion``.
    public var behind: Int64

    /// A client with these values.
    public init(
        clientId: String, user: String, device: String?, app: String?, registeredAt: Date, lastSeenAt: Date, lastPulledVersion: Int64,
        behind: Int64
    ) {
        self.clientId = clientId
        self.user = user
        self.device = device
        self.app = app
        self.registeredAt = registeredAt
        self.lastSeenAt = lastSeenAt
        self.lastPulledVersion = lastPulledVersion
        self.behind = behind
    }
}
