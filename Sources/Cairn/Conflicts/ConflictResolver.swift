import CairnProtocol
import Foundation

/// A conflict as a resolver sees it: the state the local change was made on, the local state, and the server's.
public struct Conflict: Sendable, Hashable {
    /// The collection.
    public var collection: String
    /// The record's id.
    public var id: String
    /// The server state the local changes were made on (`nil`: the record was new or deleted then).
    public var base: [String: JSONValue]?
    /// The local state (`nil`: deleted locally).
    public var local: [String: JSONValue]?
    /// The server's current state (`nil`: deleted on the server).
    public var server: [String: JSONValue]?
    /// The server's current version.
    public var serverVersion: Int64

    /// A conflict, for custom resolvers' tests and apps that build their own.
    public init(
        collection: String, id: String, base: [String: JSONValue]?, local: [String: JSONValue]?, server: [String: JSONValue]?,
        serverVersion: Int64
    ) {
        self.collection = collection
        self.id = id
        self.base = base
        self.local = local
        self.server = server
        self.serverVersion = serverVersion
    }
}

/// How a conflict ends.
public enum Resolution: Sendable, Hashable {
    /// Keep the server's state and drop the local change.
    case server
    /// Keep the local state: it is uploaded again on top of the server's version.
    case client
    /// Use this data (uploaded on top of the server's version).
    case data([String: JSONValue])
    /// Delete the record.
    case delete

    /// Which way it ended, without the data: how the conflict log and ``SyncEvent/conflictResolved(collection:id:resolution:)``
    /// report it.
    public var kind: ResolutionKind {
        switch self {
        case .server: return .server
        case .client: return .client
        case .data: return .merged
        case .delete: return .delete
        }
    }
}

/// Which way a conflict ended, as recorded in the conflict log and reported in sync events.
///
/// ```swift
/// let merged = try client.conflicts().filter { $0.resolution == .merged }
/// ```
public enum ResolutionKind: String, Sendable, Hashable, Codable, CaseIterable {
    /// The server's state was kept and the local change dropped.
    case server
    /// The local state was kept and uploaded again on top of the server's version.
    case client
    /// New data (a merge, or data a custom resolver chose) was uploaded on top of the server's version.
    case merged
    /// The record was deleted.
    case delete
}

/// Settles conflicts the server reports for uploaded changes.
///
/// ```swift
/// configuration.conflictResolver = .merge(fallback: .client)
/// configuration.collectionResolvers["visits"] = .custom { conflict in
///     .data(conflict.server ?? [:])
/// }
/// ```
public enum ConflictResolver: Sendable {
    /// The server's state wins.
    case serverWins
    /// The local state wins.
    case clientWins
    /// A field-level three-way merge: fields changed on one side only take that side's value; a field changed on
    /// both sides (and a delete against an edit) takes the `fallback` side.
    case merge(fallback: MergeFallback)
    /// The app decides.
    case custom(@Sendable (Conflict) async throws -> Resolution)

    /// Decides how `conflict` ends.
    public func resolve(_ conflict: Conflict) async throws -> Resolution {
        switch self {
        case .serverWins: return .server
        case .clientWins: return .client
        case .merge(let fallback): return Self.threeWayMerge(conflict, fallback: fallback)
        case .custom(let decide): return try await decide(conflict)
        }
    }

    /// The field-level three-way merge as a pure function.
    public static func threeWayMerge(_ conflict: Conflict, fallback: MergeFallback) -> Resolution {
        guard let local = conflict.local else { return fallback == .client ? .delete : .server }
        guard let server = conflict.server else { return fallback == .client ? .client : .server }
        let base = conflict.base ?? [:]
        var merged: [String: JSONValue] = [:]
        for key in Set(local.keys).union(server.keys) {
            let b = base[key], l = local[key], s = server[key]
            let value: JSONValue?
            if l == b {
                value = s
            } else if s == b || s == l {
                value = l
            } else {
                value = fallback == .client ? l : s
            }
            if let value { merged[key] = value }
        }
        if merged == server { return .server }
        return .data(merged)
    }
}

/// A conflict that happened and how it was resolved, as the store records it.
public struct ConflictRecord: Sendable, Hashable, Identifiable {
    /// The conflict log's own key.
    public var id: Int64
    /// The three states the resolver saw.
    public var conflict: Conflict
    /// Which way it ended.
    public var resolution: ResolutionKind
    /// The resolved data (`nil` when the record ended deleted).
    public var resolved: [String: JSONValue]?
    /// When it was resolved.
    public var resolvedAt: Date
}
