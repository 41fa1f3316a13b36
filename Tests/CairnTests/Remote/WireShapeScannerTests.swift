import CairnProtocol
import CairnTesting
import Foundation
import Testing

@testable import Cairn

/// The SDK's own readers and writers of the wire shapes (the pull page scanner, the batch answer scanner, the upload
/// writer), against the Codable form and the shapes' writers, on random values.
@Suite("Wire shapes: the SDK's scanners and upload writer")
struct WireShapeScannerTests {
    static let samples = 300
    /// Declared fields the page scanner types for their columns: one plain, one `json`.
    static let fields = [FieldSchema(name: "title", type: .string), FieldSchema(name: "meta", type: .json)]

    /// A declared field's column value: absent and null are both `nil`.
    static func column(_ value: JSONValue?) -> JSONValue? {
        guard let value, !value.isNull else { return nil }
        return value
    }

    @Test("random changes scan the same from the feed writer's page and from the Codable page")
    func changesPage() throws {
        var samples = WireSamples(seed: 0x5EED_0102)
        for index in 0..<Self.samples {
            var changes = (0..<Int.random(in: 1...4, using: &samples)).map { _ in samples.change() }
            for position in changes.indices where changes[position].data != nil {
                if samples.flip() { changes[position].data?["title"] = samples.json(depth: 0) }
                if samples.flip() { changes[position].data?["meta"] = samples.json(depth: 2) }
            }
            let page = ChangesPage(changes: changes, cursor: samples.string(), hasMore: samples.flip(), schemaVersion: "v1")
            var written = Array(#"{"changes":["#.utf8)
            written += changes.map(\.jsonText).joined(separator: ",").utf8
            written += #"],"cursor":\#(JSONValue.string(page.cursor).jsonText()),"hasMore":\#(page.hasMore)}"#.utf8
            let codable = Array(try CairnJSON.encode(page))
            for (form, bytes) in [("writer", written), ("Codable", codable)] {
                let context = Comment(rawValue: "sample \(index), \(form): \(String(decoding: bytes, as: UTF8.self))")
                let scanned = try ScannedPage(page: PageBytes(bytes), fields: Self.fields)
                #expect(scanned.cursor == page.cursor && scanned.hasMore == page.hasMore, context)
                try #require(scanned.changes.count == changes.count, context)
                for (change, read) in zip(changes, scanned.changes) {
                    #expect(read.id == change.id && read.version == change.version, context)
                    #expect(read.removed == (change.deleted || change.gone) && read.gone == change.gone, context)
                    #expect(read.updatedAt == change.updatedAt.map(RFC3339.string(from:)) && read.updatedBy == change.updatedBy, context)
                    #expect(try read.dataText.flatMap { try JSONValue(parsing: $0).objectValue } == change.data, context)
                    #expect(read.fields[0] == Self.column(change.data?["title"]), context)
                    #expect(try read.fields[1].map { try JSONValue(parsing: $0.stringValue ?? "") } == Self.column(change.data?["meta"]), context)
                }
            }
        }
    }

    @Test("random batch answers scan the same from the answer writer and from the Codable answer")
    func batchResults() throws {
        var samples = WireSamples(seed: 0x5EED_0104)
        for index in 0..<Self.samples {
            let results = (0..<Int.random(in: 1...4, using: &samples)).map { _ in samples.result() }
            let written = Array(#"{"results":[\#(results.map(\.jsonText).joined(separator: ","))]}"#.utf8)
            let codable = Array(try CairnJSON.encode(BatchResponse(results: results)))
            for (form, bytes) in [("writer", written), ("Codable", codable)] {
                let context = Comment(rawValue: "sample \(index), \(form): \(String(decoding: bytes, as: UTF8.self))")
                let scanned = try bytes.withUnsafeBufferPointer { try BatchResultsScanner.scan($0) }
                try #require(scanned.count == results.count, context)
                for (result, read) in zip(results, scanned) {
                    #expect(read.opId == result.opId && read.status == result.status, context)
                    #expect(try read.appliedRecord(id: result.record?.id ?? "", sent: nil) == result.record, context)
                    #expect(read.current == result.current && read.error == result.error, context)
                }
            }
        }
    }

    @Test("random queued operations upload as the batch the server's readers and the Codable reader read back")
    func uploadWriter() throws {
        var samples = WireSamples(seed: 0x5EED_0103)
        for index in 0..<Self.samples {
            let operations = (0..<Int.random(in: 0...5, using: &samples)).map { _ in samples.operation() }
            let queued = operations.enumerated().map { position, operation in
                PendingOperation(
                    sequence: Int64(position), opId: operation.opId, collection: operation.collection, recordID: operation.id,
                    kind: operation.op, baseVersion: operation.baseVersion,
                    // The queue keeps the text as the app's write made it, in any member order.
                    dataText: operation.data.map { JSONValue.object($0).jsonText(sortedKeys: false) }, attempts: 0, createdAt: Date(),
                    waitsFor: nil)
            }
            let body = PendingOperation.batchBody(queued)
            let context = Comment(rawValue: "sample \(index): \(String(decoding: body, as: UTF8.self))")
            let direct = try BatchRequest(json: JSONValue(parsing: body))
            #expect(!direct.atomic && direct.operations == operations, context)
            let decoded = try CairnJSON.decode(BatchRequest.self, from: body)
            #expect(!decoded.atomic && decoded.operations == operations, context)
            for (operation, written) in zip(operations, queued) {
                var bytes: [UInt8] = []
                written.writeWireJSON(into: &bytes)
                #expect(try JSONValue(parsing: bytes) == JSONValue(parsing: operation.jsonText), context)
            }
        }
    }
}

extension ScannedChange {
    /// The column values as JSON values (json fields as `.string` of their JSON text), as the checks compare them.
    var fields: [JSONValue?] {
        values.map { value in
            switch value {
            case .absent: nil
            case .integer(let int): .integer(int)
            case .number(let double): .number(double)
            case .bool(let bool): .bool(bool)
            case .bytes(let range): page.map { .string($0.text(range)) }
            case .text(let text): .string(text)
            }
        }
    }
}
