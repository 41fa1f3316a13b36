import CairnProtocol
import CairnTesting
import Foundation
import NIOCore
import Testing

@testable import CairnServer

/// The server's own readers and writers of the wire shapes (the feed page, applied answers and their replays, stored
/// rows), against the Codable form, on random values.
@Suite("Wire shapes: the server's writers")
struct WireShapeWriterTests {
    static let samples = 300

    /// The row a storage backend returns for `change`.
    static func row(_ change: Change, samples: inout WireSamples) -> FeedRow {
        FeedRow(
            id: change.id, version: change.version, updatedAt: change.updatedAt.map(RFC3339.string(from:)) ?? "",
            updatedBy: change.updatedBy ?? "", deleted: change.deleted,
            // Stored text keeps the members in any order; a gone marker's row still holds its data.
            dataText: change.data.map { JSONValue.object($0).jsonText(sortedKeys: false) } ?? (change.gone ? #"{"x":1}"# : "{}"),
            // A tombstone is written as one whether or not its empty data matches the filter.
            matchesFilter: change.deleted ? samples.flip() : !change.gone)
    }

    @Test("random feed rows make a page the Codable reader reads as the changes they stand for")
    func feedPage() throws {
        var samples = WireSamples(seed: 0x5EED_0202)
        for index in 0..<Self.samples {
            var changes = (0..<Int.random(in: 0...4, using: &samples)).map { _ in samples.change() }
            for position in changes.indices where !changes[position].gone {
                // The feed always carries who and when for records and tombstones.
                changes[position].updatedAt = changes[position].updatedAt ?? Date(timeIntervalSince1970: 1)
                changes[position].updatedBy = changes[position].updatedBy ?? ""
            }
            let rows = changes.map { Self.row($0, samples: &samples) }
            let cursor = FeedCursor(since: samples.integer(), snapshotHigh: samples.flip() ? samples.integer() : nil)
            let schemaVersion = samples.string()
            let hasMore = samples.flip()
            let body = ChangesFeed.body(FeedRows(rows: rows, hasMore: hasMore, purgedThrough: 0, head: 0), cursor: cursor, schemaVersion: schemaVersion)
            let bytes = Array(buffer: body)
            let context = Comment(rawValue: "sample \(index): \(String(decoding: bytes, as: UTF8.self))")
            let page = try CairnJSON.decode(ChangesPage.self, from: bytes)
            #expect(page.changes == changes, context)
            #expect(page.cursor == cursor.token && page.hasMore == hasMore && page.schemaVersion == schemaVersion, context)
            // Each change is the shape's own text, byte for byte, but for the data's member order as stored.
            for (change, row) in zip(changes, rows) {
                var written: [UInt8] = []
                ChangesFeed.writeChange(row, into: &written)
                #expect(try JSONValue(parsing: written) == JSONValue(parsing: change.jsonText), context)
            }
        }
    }

    @Test("random applied answers, stored and replayed, read back as the results and records they stand for")
    func appliedAnswers() throws {
        var samples = WireSamples(seed: 0x5EED_0204)
        for index in 0..<Self.samples {
            var record = samples.record()
            // A committed state always says who and when, and keeps no nulls.
            record.updatedAt = record.updatedAt ?? Date(timeIntervalSince1970: 1)
            record.updatedBy = record.updatedBy ?? ""
            record.data = record.data.filter { !$0.value.isNull }
            let opId = samples.string()
            let updatedAt = RFC3339.string(from: record.updatedAt!)
            let dataText = record.deleted ? nil : JSONValue.object(record.data).jsonText()
            let text = BatchAnswer.appliedText(opId: opId, record: record, dataText: dataText, updatedAt: updatedAt)
            let context = Comment(rawValue: "sample \(index): \(text)")
            let applied = OperationResult.applied(opId, record)
            #expect(try CairnJSON.decode(OperationResult.self, from: Array(text.utf8)) == applied, context)
            #expect(text == applied.jsonText, context)
            // The stored row, read back as the state a batch plans against.
            let row = RecordRow(
                id: record.id, version: record.version, updatedAt: updatedAt, updatedBy: record.updatedBy!, deleted: record.deleted,
                dataText: dataText ?? "{}", fieldVersions: [:])
            #expect(try StoredRecordState(row).record == record, context)
            // Remembered without its data, replayed with the operation's own.
            guard !record.deleted else { continue }
            let operation = SyncOperation(opId: opId, collection: "c", id: record.id, op: .update, data: record.data)
            let stored = BatchAnswer.appliedText(opId: opId, record: record, dataText: nil, updatedAt: updatedAt)
            let replayed = try BatchAnswer.replay(stored: stored, of: operation, dataText: operation.canonicalDataText)
            #expect(replayed.0 == applied && replayed.1 == text, context)
        }
    }

    @Test("random conflicts and rejections answer the shape's text")
    func otherAnswers() throws {
        var samples = WireSamples(seed: 0x5EED_0205)
        for index in 0..<Self.samples {
            let result = samples.flip() ? OperationResult.conflict(samples.string(), current: samples.record()) : .rejected(samples.string(), samples.error())
            let answer = BatchAnswer(result: result)
            let text = answer.text(minimal: false)
            let context = Comment(rawValue: "sample \(index): \(text)")
            #expect(try CairnJSON.decode(OperationResult.self, from: Array(text.utf8)) == result, context)
            #expect(answer.storedText == text && answer.text(minimal: true) == text, context)
        }
    }
}
