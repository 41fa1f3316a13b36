/// Printing a sign-in request shows the user name, never the password.
extension LoginRequest: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// `LoginRequest(username: "alice", password: <redacted>)`.
    public var description: String { "LoginRequest(username: \(String(reflecting: username)), password: <redacted>)" }
    /// The same as ``description``.
    public var debugDescription: String { description }
    /// The user name only.
    public var customMirror: Mirror { Mirror(self, children: ["username": username, "password": "<redacted>"], displayStyle: .struct) }
}

/// Printing a refresh request never shows the token.
extension RefreshRequest: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// `RefreshRequest(refreshToken: <redacted>)`.
    public var description: String { "RefreshRequest(refreshToken: <redacted>)" }
    /// The same as ``description``.
    public var debugDescription: String { description }
    /// No token.
    public var customMirror: Mirror { Mirror(self, children: ["refreshToken": "<redacted>"], displayStyle: .struct) }
}

/// Printing tokens shows who signed in and for how long, never the tokens.
extension TokenResponse: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// `TokenResponse(accessToken: <redacted>, refreshToken: <redacted>, expiresIn: 900, user: "alice")`.
    public var description: String {
        "TokenResponse(accessToken: <redacted>, refreshToken: <redacted>, expiresIn: \(expiresIn), user: \(String(reflecting: user.name)))"
    }
    /// The same as ``description``.
    public var debugDescription: String { description }
    /// No tokens.
    public var customMirror: Mirror {
        Mirror(
            self, children: ["accessToken": "<redacted>", "refreshToken": "<redacted>", "expiresIn": expiresIn, "user": user],
            displayStyle: .struct)
    }
}
