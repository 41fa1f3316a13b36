/// A member's role in a project. Each role includes the rights of the ones before it.
public enum Role: String, Codable, Sendable, CaseIterable, Comparable {
    /// Pull changes and download files.
    case reader
    /// Also push changes and upload files.
    case writer
    /// Also change the schema and manage members.
    case admin

    /// Orders roles by rights, `reader < writer < admin`, so `role >= .writer` asks "may this member push?".
    public static func < (lhs: Role, rhs: Role) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

/// The body of `POST /v1/auth/login`.
public struct LoginRequest: Codable, Sendable {
    /// The account's username; five failed logins for one username in five minutes answer `429 rate_limited`.
    public var username: String
    /// The password in clear text; send it over HTTPS only.
    public var password: String

    /// Creates a login body from a username and password.
    public init(username: String, password: String) {
        self.username = username
        self.password = password
    }
}

/// The body of `POST /v1/auth/refresh` (and optionally of `POST /v1/auth/logout`).
public struct RefreshRequest: Codable, Sendable {
    /// The refresh token from the last ``TokenResponse``; it is usable once, and presenting a used one revokes its whole family.
    public var refreshToken: String

    /// Creates a refresh (or logout) body around a refresh token.
    public init(refreshToken: String) { self.refreshToken = refreshToken }
}

/// One of a user's projects and the role held there.
public struct ProjectMembership: Codable, Sendable, Hashable {
    /// The project's name, as used in `/v1/projects/{project}/...` paths.
    public var name: String
    /// The user's role in this project: what they may pull, push or change there.
    public var role: Role

    /// Creates a membership of one project with one role.
    public init(name: String, role: Role) {
        self.name = name
        self.role = role
    }
}

/// The signed-in user.
public struct UserInfo: Codable, Sendable, Hashable {
    /// The username the user signed in with; the server records it as `updatedBy` on the records they write.
    public var name: String
    /// The projects this user is a member of, each with its role; other projects answer `404 not_found` to them.
    public var projects: [ProjectMembership]
    /// Whether the user is a server operator (`admin` of every project, and the server-wide administration routes);
    /// `operator` on the wire. A server from before this field answers without it: `false`.
    public var isOperator: Bool

    /// Creates the user description the server returns in ``TokenResponse/user``.
    public init(name: String, projects: [ProjectMembership], isOperator: Bool = false) {
        self.name = name
        self.projects = projects
        self.isOperator = isOperator
    }

    enum CodingKeys: String, CodingKey {
        case name, projects
        case isOperator = "operator"
    }

    /// Decodes the user; a missing `operator` is `false`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        projects = try container.decode([ProjectMembership].self, forKey: .projects)
        isOperator = try container.decodeIfPresent(Bool.self, forKey: .isOperator) ?? false
    }
}

/// The answer of login and refresh: a short-lived access token and a rotating refresh token.
public struct TokenResponse: Codable, Sendable {
    /// Send as `Authorization: Bearer <accessToken>`.
    public var accessToken: String
    /// Exchange at `POST /v1/auth/refresh` for a new pair; usable once.
    public var refreshToken: String
    /// Seconds until `accessToken` expires.
    public var expiresIn: Int
    /// Who signed in, and their projects.
    public var user: UserInfo

    /// Creates a token pair answer as the server sends it after login or refresh.
    public init(accessToken: String, refreshToken: String, expiresIn: Int, user: UserInfo) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.expiresIn = expiresIn
        self.user = user
    }
}

/// The body of `POST /v1/projects/{project}/clients`.
public struct ClientRegistrationRequest: Codable, Sendable {
    /// A free-text name of the device (a host name, "Alice's iPhone"), at most 200 bytes; `nil` leaves it unset.
    public var device: String?
    /// A free-text name of the app that syncs (such as `"cairn"` for the CLI), at most 200 bytes; `nil` leaves it unset.
    public var app: String?

    /// Creates a registration body; both names are optional and only describe the client to operators.
    public init(device: String? = nil, app: String? = nil) {
        self.device = device
        self.app = app
    }
}

/// The answer of client registration: send `clientId` as `Cairn-Client-ID` on every call.
public struct ClientRegistration: Codable, Sendable {
    /// The id the server gave this client; the SDK keeps it in the local store and sends it on every call.
    public var clientId: String

    /// Creates the registration answer (`201 {"clientId"}`).
    public init(clientId: String) { self.clientId = clientId }
}

/// A live notice sent over Server-Sent Events: a collection changed at `version`. It carries no record data.
public struct ChangeNotice: Codable, Sendable, Hashable {
    /// The collection that changed; pull its changes feed to get the records.
    public var collection: String
    /// The project-wide change sequence number of that change (a record `version`), not a count of changes.
    public var version: Int64

    /// Creates a notice that `collection` changed at `version`.
    public init(collection: String, version: Int64) {
        self.collection = collection
        self.version = version
    }
}

/// HTTP header names of the protocol.
public enum CairnHeader {
    /// The request id, echoed on every response.
    public static let requestID = "X-Request-ID"
    /// The registered client's id.
    public static let clientID = "Cairn-Client-ID"
    /// The bytes of a file upload received so far (answered by `HEAD` and `PUT` of an upload URL).
    public static let uploadOffset = "Upload-Offset"
    /// A file upload's declared size (answered by `HEAD` of an upload URL).
    public static let uploadLength = "Upload-Length"
    /// A changes page's `cursor`, in its head as in its body: a client can ask for the next page as soon as the head
    /// arrived, while the body still travels.
    public static let cursor = "Cairn-Cursor"
    /// A changes page's `hasMore` (`true` or `false`), in its head as in its body.
    public static let hasMore = "Cairn-Has-More"
    /// The schema number the app build was made for (sent by the SDK on every call when configured): the server
    /// translates its records, or answers `426 upgrade_required` below the project's minimum.
    public static let schemaVersion = "Cairn-Schema-Version"
    /// RFC 7240's `Prefer` of a batch: `return=minimal` asks the server to leave out the data of each write it
    /// committed exactly as sent (the client has it), which halves a push's answer.
    public static let prefer = "Prefer"
    /// The answer's `Preference-Applied: return=minimal` when the server honoured it.
    public static let preferenceApplied = "Preference-Applied"
    /// The preference value of ``prefer`` and ``preferenceApplied``.
    public static let returnMinimal = "return=minimal"
    /// The preference a client adds to ``returnMinimal`` when it matches results to operations by their place: a
    /// minimal answer then leaves out the opIds of writes committed as sent too.
    public static let positionalResults = "results=positional"
    /// W3C `Server-Timing` of a changes page: `feed;dur=MILLISECONDS`, how long the server took to read the page
    /// before its head left. A client subtracts it from the wait for the head to learn the link's round trip, and
    /// sizes its next pages so that their bodies keep the link busy for longer than a round trip.
    public static let serverTiming = "Server-Timing"
    /// The ``serverTiming`` metric name of a changes page.
    public static let feedTimingMetric = "feed"
}
