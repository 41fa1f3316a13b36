import CairnProtocol
import CairnTesting
import Foundation
import Testing

@Suite("Wire shape: OperationResult")
struct OperationResultShapeTests {
    @Test("random results (applied, conflict, rejected) read back the same through every writer of the shape and the Codable form")
    func everyCodecAgrees() throws {
        var samples = WireSamples(seed: 0x5EED_0004)
        for index in 0..<WireShapeChecks.samples {
            let result = samples.result()
            let text = result.jsonText
            let context = Comment(rawValue: "sample \(index): \(text)")
            #expect(try WireShapeChecks.codable(result) == result, context)
            // The answer writer, read by the Codable reader.
            #expect(try WireShapeChecks.decode(OperationResult.self, text) == result, context)
            // Its text is the canonical text of the Codable form (but a tombstone's empty data).
            guard case .object(var members) = try WireShapeChecks.codableTree(result) else {
                Issue.record("not an object: \(text)")
                continue
            }
            for key in ["record", "current"] { members[key] = members[key].map(WireShapeChecks.recordTree) }
            #expect(JSONValue.object(members).jsonText() == text, context)
            #expect(result.jsonValue == (try JSONValue(parsing: text)), context)
            #expect(try JSONValueDecoder().decode(OperationResult.self, from: result.jsonValue) == result, context)
            // A whole answer, in its Codable form.
            #expect(try WireShapeChecks.codable(BatchResponse(results: [result])).results == [result], context)
        }
    }
}
