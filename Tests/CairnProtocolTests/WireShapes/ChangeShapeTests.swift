import CairnProtocol
import CairnTesting
import Foundation
import Testing

@Suite("Wire shape: Change")
struct ChangeShapeTests {
    @Test("random changes (live, tombstones, gone markers) read back the same through the feed's writer and the Codable form")
    func everyCodecAgrees() throws {
        var samples = WireSamples(seed: 0x5EED_0002)
        for index in 0..<WireShapeChecks.samples {
            let change = samples.change()
            let text = change.jsonText
            let context = Comment(rawValue: "sample \(index): \(text)")
            #expect(try WireShapeChecks.codable(change) == change, context)
            // The feed's writer, read by the Codable reader.
            #expect(try WireShapeChecks.decode(Change.self, text) == change, context)
            #expect(try WireShapeChecks.decode(Change.self, text).record == change.record, context)
            // A page of them, as the Codable form of the page.
            let page = ChangesPage(changes: [change, change], cursor: "c", hasMore: false, schemaVersion: "v")
            #expect(try WireShapeChecks.codable(page).changes == page.changes, context)
        }
    }
}
