import CairnProtocol
import Foundation

/// Holds the client's tokens: signs in with the password when it has none, refreshes before they expire or when
/// the server refuses one, and asks the app's token provider when the app signs in itself.
actor AuthSession {
    private let credentials: Credentials
    private var accessToken: String?
    private var refreshToken: String?
    private var expiresAt: Date?
    private let clock: any WallClock
    private var signIn: (@Sendable (Credentials) async throws -> TokenResponse)?
    private var refresh: (@Sendable (String) async throws -> TokenResponse)?

    init(credentials: Credentials, clock: any WallClock) {
        self.credentials = credentials
        self.clock = clock
    }

    func bind(signIn: @escaping @Sendable (Credentials) async throws -> TokenResponse, refresh: @escaping @Sendable (String) async throws -> TokenResponse) {
        self.signIn = signIn
        self.refresh = refresh
    }

    /// A token to send now.
    func token() async throws -> String {
        if let accessToken, let expiresAt, clock.now() < expiresAt - 30 { return accessToken }
        return try await renew()
    }

    /// Called after the server refused `token`: gets a new one unless another call already did.
    func refused(_ token: String) async throws -> String {
        if let accessToken, accessToken != token { return accessToken }
        accessToken = nil
        return try await renew()
    }

    /// Forgets every token (sign-out).
    func forget() {
        accessToken = nil
        refreshToken = nil
        expiresAt = nil
    }

    private func renew() async throws -> String {
        switch credentials {
        case .token(_, let provider):
            let token = try await provider()
            accessToken = token
            expiresAt = clock.now() + 3600 * 24 * 365
            return token
        case .password:
            if let refreshToken, let refresh {
                do {
                    return try adopt(await refresh(refreshToken))
                } catch let error as CairnError where error.code == .unauthorized {
                    self.refreshToken = nil
                }
            }
            guard let signIn else { throw CairnError(.unauthorized, "The client is not connected") }
            return try adopt(await signIn(credentials))
        }
    }

    private func adopt(_ response: TokenResponse) -> String {
        accessToken = response.accessToken
        refreshToken = response.refreshToken
        expiresAt = clock.now() + TimeInterval(response.expiresIn)
        return response.accessToken
    }
}
