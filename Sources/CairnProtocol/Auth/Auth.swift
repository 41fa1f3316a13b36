/// A member's role in a project. Each role includes the rights of the ones before it.
public enum Role: String, Codable, Sendable, CaseIterable, Comparable {
    /// Pull changes and download files.
    case reader
    /// Also push changes and upload files.
    case writer
    /// Also change the schema and manage members.
    case admin

    public static func < (lhs: Role, rhs: Role) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

/// The body of `POST /v1/auth/login`.
public struct LoginRequest: Codable, Sendable {
    public var username: String
    public var password: String

    public init(username: String, password: String) {
        self.username = username
        self.password = password
    }
}

/// The body of `POST /v1/auth/refresh` (and optionally of `POST /v1/auth/logout`).
public struct RefreshRequest: Codable, Sendable {
    public var refreshToken: String

    public init(refreshToken: String) { self.refreshToken = refreshToken }
}

/// One of a user's projects and the role held there.
public struct ProjectMembership: Codable, Sendable, Hashable {
    public var name: String
    public var role: Role

    public init(name: String, role: Role) {
        self.name = name
        self.role = role
    }
}

/// The signed-in user.
public struct UserInfo: Codable, Sendable, Hashable {
    public var name: String
    public var projects: [ProjectMembership]

    public init(name: String, projects: [ProjectMembership]) {
        self.name = name
        self.projects = projects
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

    public init(accessToken: String, refreshToken: String, expiresIn: Int, user: UserInfo) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.expiresIn = expiresIn
        self.user = user
    }
}

/// The body of `POST /v1/projects/{project}/clients`.
public struct ClientRegistrationRequest: Codable, Sendable {
    public var device: String?
    public var app: String?

    public init(device: String? = nil, app: String? = nil) {
        self.device = device
        self.app = app
    }
}

/// The answer of client registration: send `clientId` as `Cairn-Client-ID` on every call.
public struct ClientRegistration: Codable, Sendable {
    public var clientId: String

    public init(clientId: String) { self.clientId = clientId }
}

/// A live notice sent over Server-Sent Events: a collection changed at `version`. It carries no record data.
public struct ChangeNotice: Codable, Sendable, Hashable {
    public var collection: String
    public var version: Int64

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
}
