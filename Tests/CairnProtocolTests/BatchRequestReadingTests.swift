import CairnProtocol
import Foundation
import Testing

@Suite("Reading batch requests")
struct BatchRequestReadingTests {
    /// What a reading gave: the batch, or the kind, path and text of its error.
    func outcome(_ read: () throws -> BatchRequest) -> String {
        do {
            let batch = try read()
            return "atomic \(batch.atomic) " + batch.operations.map { "\($0)" }.joined(separator: "; ")
        } catch let error as DecodingError {
            switch error {
            case .keyNotFound(let key, let context):
                return "missing \(key.stringValue) at \(context.codingPath.map(\.stringValue)): \(context.debugDescription)"
            case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
                return "bad \(context.codingPath.map(\.stringValue)): \(context.debugDescription)"
            @unknown default:
                return "\(error)"
            }
        } catch {
            return "\(error)"
        }
    }

    @Test("the direct reader gives what the Decodable conformance gives, values and errors alike", arguments: [
        #"{"operations":[]}"#,
        #"{"atomic":true,"operations":[{"opId":"o1","collection":"notes","id":"n1","op":"create","data":{"a":[1,{"b":null}]}}]}"#,
        #"{"atomic":null,"operations":[{"opId":"o1","collection":"notes","id":"n1","op":"patch","baseVersion":7,"data":{"a":null}}]}"#,
        #"{"operations":[{"opId":"o1","collection":"notes","id":"n1","op":"delete","baseVersion":null,"data":null}]}"#,
        #"{"operations":[{"opId":"o1","collection":"notes","id":"n1","op":"delete","baseVersion":3.0}]}"#,
        #"{"operations":[{"opId":"o1","collection":"notes","id":"n1","op":"delete","baseVersion":3.5}]}"#,
        #"{"operations":[{"opId":"o1","collection":"notes","id":"n1","op":"remove"}]}"#,
        #"{"operations":[{"opId":"o1","collection":"notes","op":"create","data":{}}]}"#,
        #"{"operations":[{"opId":1,"collection":"notes","id":"n1","op":"create"}]}"#,
        #"{"operations":[{"opId":"o1","collection":"notes","id":"n1","op":"create","data":[1]}]}"#,
        #"{"operations":[{"opId":"o1","collection":"notes","id":"n1","op":"create"}, 5]}"#,
        #"{"operations":{}}"#, #"{"atomic":"yes","operations":[]}"#, #"{}"#, #"[]"#, #""operations""#,
    ])
    func sameAsDecodable(text: String) throws {
        let json = try JSONValue(parsing: Array(text.utf8))
        let direct = outcome { try BatchRequest(json: json) }
        let decoded = outcome { try JSONValueDecoder().decode(BatchRequest.self, from: json) }
        #expect(direct == decoded)
    }
}
