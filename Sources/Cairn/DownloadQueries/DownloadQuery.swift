import CairnProtocol
import Foundation

/// A persistent download query: the records of one collection that match a filter are pulled to the device, with
/// the query's own cursor. Queries of a collection may overlap; a record stays while any query holds it or it has a
/// local change waiting.
///
/// ```swift
/// try client.createDownloadQuery(name: "my-sites", collection: "visits", filter: .condition("inspector", .eq, "ada"))
/// try await client.sync()
/// try client.updateDownloadQuery(name: "my-sites", filter: .condition("region", .eq, "north"))   // downloads only what is new
/// ```
public struct DownloadQuery: Sendable, Hashable {
    /// The query's name, unique in the store.
    public var name: String
    /// The collection it downloads from.
    public var collection: String
    /// The records it selects, in PROTOCOL.md's filter language (evaluated by the server).
    public var filter: Filter
    /// True once a pull of the query ran to its end.
    public var firstPullCompleted: Bool
    /// True while a changed filter's newly matching records are still to be downloaded.
    public var isUpdating: Bool
    /// When its last page was applied.
    public var lastPullAt: Date?
    /// How many records it holds on the device.
    public var recordCount: Int
    /// Whether the files its records point at are downloaded after each sync (``CairnFiles/prefetch(query:)``).
    public var prefetchFiles: Bool = false
}
