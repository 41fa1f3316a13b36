import CairnProtocol
import CairnTesting
import Foundation
import Testing

@Suite("Wire shape: BatchRequest")
struct BatchRequestShapeTests {
    @Test("random batches read back the same through the upload writer, the direct reader and the Codable form")
    func everyCodecAgrees() throws {
        var samples = WireSamples(seed: 0x5EED_0005)
        for index in 0..<WireShapeChecks.samples {
            let batch = samples.batch()
            let text = batch.jsonText
            let context = Comment(rawValue: "sample \(index): \(text)")
            let codable = try WireShapeChecks.codable(batch)
            #expect(codable.atomic == batch.atomic && codable.operations == batch.operations, context)
            // The upload writer, read by the Codable reader and by the server's direct reader.
            let decoded = try WireShapeChecks.decode(BatchRequest.self, text)
            #expect(decoded.atomic == batch.atomic && decoded.operations == batch.operations, context)
            let direct = try BatchRequest(json: JSONValue(parsing: text))
            #expect(direct.atomic == batch.atomic && direct.operations == batch.operations, context)
            // The direct reader of the Codable form.
            let fromCodable = try BatchRequest(json: JSONValue(parsing: CairnJSON.encode(batch)))
            #expect(fromCodable.atomic == batch.atomic && fromCodable.operations == batch.operations, context)
        }
    }
}
