import CairnProtocol
import Foundation

/// Credentials print their user, never the password or the token provider's tokens.
extension Credentials: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// `password(user: "alice", password: <redacted>)` or `token(user: "alice", provider: <closure>)`.
    public var description: String {
        switch self {
        case .password(let user, _): return "password(user: \(String(reflecting: user)), password: <redacted>)"
        case .token(let user, _): return "token(user: \(String(reflecting: user)), provider: <closure>)"
        }
    }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// Mirrors show the user only, so `dump` and debuggers print no secret either.
    public var customMirror: Mirror {
        switch self {
        case .password(let user, _): return Mirror(self, children: ["user": user, "password": "<redacted>"], displayStyle: .enum)
        case .token(let user, _): return Mirror(self, children: ["user": user, "provider": "<closure>"], displayStyle: .enum)
        }
    }
}

/// A configuration prints its settings with the credentials redacted.
extension CairnConfiguration: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The server, project, device, user and store, with the credentials redacted.
    public var description: String {
        "CairnConfiguration(serverURL: \(serverURL.absoluteString), project: \(project), device: \(device), "
            + "credentials: \(credentials), store: \(store), storeKey: \(storeKey.map { "\($0)" } ?? "nil"), batchSize: \(batchSize), pageSize: \(pageSize))"
    }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// Mirrors hold the redacted credentials.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "serverURL": serverURL, "project": project, "device": device, "app": app as Any, "credentials": credentials,
                "store": store, "storeKey": storeKey as Any, "batchSize": batchSize, "pageSize": pageSize, "requestTimeout": requestTimeout,
                "connectTimeout": connectTimeout,
            ], displayStyle: .struct)
    }
}
