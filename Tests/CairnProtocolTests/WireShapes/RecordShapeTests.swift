import CairnProtocol
import CairnTesting
import Foundation
import Testing

@Suite("Wire shape: Record")
struct RecordShapeTests {
    @Test("random records read back the same through every reader and writer of the shape, and the Codable form")
    func everyCodecAgrees() throws {
        var samples = WireSamples(seed: 0x5EED_0001)
        for index in 0..<WireShapeChecks.samples {
            let record = samples.record()
            let text = record.jsonText
            let context = Comment(rawValue: "sample \(index): \(text)")
            #expect(try WireShapeChecks.codable(record) == record, context)
            // The wire writer (batch answers, conflicts), read by the Codable reader.
            #expect(try WireShapeChecks.decode(Record.self, text) == record, context)
            // The writer's text is the canonical text of the Codable form, byte for byte (but a tombstone's empty data).
            #expect(WireShapeChecks.recordTree(try WireShapeChecks.codableTree(record)).jsonText() == text, context)
            // jsonValue is that JSON as a value.
            #expect(record.jsonValue == (try JSONValue(parsing: text)), context)
            #expect(try JSONValueDecoder().decode(Record.self, from: record.jsonValue) == record, context)
            // The parts a server stores (commit time and data as text), read back.
            #expect(try RecordText(record).record() == record, context)
        }
    }
}
