import CairnProtocol
import CairnTesting
import Foundation
import Testing

@Suite("Wire shape: SyncOperation")
struct SyncOperationShapeTests {
    @Test("random operations read back the same through the upload writer, the direct reader, the fingerprint and the Codable form")
    func everyCodecAgrees() throws {
        var samples = WireSamples(seed: 0x5EED_0003)
        for index in 0..<WireShapeChecks.samples {
            let operation = samples.operation()
            let text = operation.jsonText
            let context = Comment(rawValue: "sample \(index): \(text)")
            #expect(try WireShapeChecks.codable(operation) == operation, context)
            // The upload writer, read by the Codable reader and by the server's direct reader.
            #expect(try WireShapeChecks.decode(SyncOperation.self, text) == operation, context)
            let body = try JSONValue(parsing: #"{"operations":[\#(text)]}"#)
            #expect(try BatchRequest(json: body).operations == [operation], context)
            // The fingerprint is the canonical JSON of the Codable form without its opId.
            guard case .object(var members) = try WireShapeChecks.codableTree(operation) else {
                Issue.record("not an object: \(text)")
                continue
            }
            members["opId"] = nil
            #expect(operation.fingerprintText == JSONValue.object(members).jsonText(), context)
            members["opId"] = .string(operation.opId)
            #expect(try JSONValueDecoder().decode(SyncOperation.self, from: .object(members)) == operation, context)
        }
    }
}
