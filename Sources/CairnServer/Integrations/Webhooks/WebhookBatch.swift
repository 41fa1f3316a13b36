import CairnProtocol
import Foundation

/// The next delivery of a webhook: up to ``WebhookSettings/batchSize`` changes of its collections after its cursor,
/// in the feed's order, and the version the cursor moves to once they are accepted. Read from the feed itself (one
/// range per collection, each in its own snapshot), so a delivery never skips a change: the cursor moves only as far
/// as every collection was read.
struct WebhookBatch: Sendable {
    /// The changes, in version order.
    var changes: [(collection: String, row: FeedRow)]
    /// Where the cursor moves once they are delivered (past changes of other collections too).
    var through: Int64

    /// The batch after `webhook`'s cursor in `storage`; `nil` when its project has no collection it delivers.
    static func next(for webhook: StoredWebhook, storage: any ServerStorage, limit: Int) async throws -> WebhookBatch? {
        // The project's head, read before the schema the ranges follow: every change at or below it was committed to
        // a collection of that schema, so a collection added meanwhile cannot be passed over.
        guard let earlier = try await storage.schema(project: webhook.project) else { return nil }
        let head = try await storage.headVersion(project: webhook.project, schema: earlier)
        guard let schema = try await storage.schema(project: webhook.project) else { return nil }
        let collections = schema.collections.filter { webhook.collections.isEmpty || webhook.collections.contains($0.name) }
        guard !collections.isEmpty else { return nil }
        var changes: [(collection: String, row: FeedRow)] = []
        var bound = head
        for collection in collections {
            let range = try await storage.feedRange(
                project: webhook.project, collection: collection, since: webhook.cursor, snapshotHigh: nil, limit: limit,
                selection: FeedSelection())
            changes += range.rows.map { (collection.name, $0) }
            // What this range vouches for: through its last row when more follow, else through its snapshot's head.
            bound = min(bound, range.hasMore ? (range.rows.last?.version ?? webhook.cursor) : range.head)
        }
        let ordered = changes.filter { $0.row.version <= bound }.sorted { $0.row.version < $1.row.version }.prefix(limit)
        let through = ordered.count == limit ? ordered.last!.row.version : bound
        return WebhookBatch(changes: Array(ordered), through: max(through, webhook.cursor))
    }

    /// The delivery's body, as signed and sent: `{"project", "webhook", "deliveries": [...]}` with each record's
    /// stored JSON as its `data` (`null` for a delete).
    func body(project: String, webhook: String) -> Data {
        var text = #"{"project":"# + JSONValue.string(project).jsonText() + #","webhook":"# + JSONValue.string(webhook).jsonText()
        text += #","deliveries":["#
        for (index, change) in changes.enumerated() {
            let row = change.row
            if index > 0 { text += "," }
            text += #"{"deliveryId":"# + JSONValue.string("\(webhook):\(row.version)").jsonText()
            text += #","collection":"# + JSONValue.string(change.collection).jsonText()
            text += #","id":"# + JSONValue.string(row.id).jsonText()
            text += #","version":\#(row.version),"op":"# + (row.deleted ? #""delete""# : #""upsert""#)
            text += #","data":"# + (row.deleted ? "null" : row.dataText)
            text += #","updatedBy":"# + JSONValue.string(row.updatedBy).jsonText()
            text += #","committedAt":"# + JSONValue.string(row.updatedAt).jsonText() + "}"
        }
        text += "]}"
        return Data(text.utf8)
    }
}
