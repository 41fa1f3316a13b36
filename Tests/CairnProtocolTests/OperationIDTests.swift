import CairnProtocol
import Foundation
import Testing

@Suite("Operation ids")
struct OperationIDTests {
    @Test("ids are UUID version 7 text that Foundation parses, with the RFC 9562 variant")
    func format() throws {
        let id = OperationID.make()
        let uuid = try #require(UUID(uuidString: id))
        #expect(id == id.lowercased())
        #expect(uuid.uuidString.lowercased() == id)
        let bytes = withUnsafeBytes(of: uuid.uuid) { Array($0) }
        #expect(bytes[6] >> 4 == 7)
        #expect(bytes[8] >> 6 == 0b10)
    }

    @Test("ids made later sort after earlier ones, within one millisecond and when the clock steps back")
    func ordered() {
        let now = Date()
        var ids = (0..<10_000).map { _ in OperationID.make(now: now) }
        ids.append(OperationID.make(now: now.addingTimeInterval(-60)))
        ids.append(OperationID.make())
        #expect(ids == ids.sorted())
        #expect(Set(ids).count == ids.count)
    }

    @Test("the creation time reads back; other ids have none")
    func creationTime() throws {
        let before = Date()
        let date = try #require(OperationID.date(of: OperationID.make()))
        // Ids made in a burst may run a few milliseconds ahead of the clock to stay ordered.
        #expect(date.timeIntervalSince(before) > -0.002 && date.timeIntervalSince(before) < 1)
        #expect(OperationID.date(of: UUID().uuidString.lowercased().replacingOccurrences(of: "-4", with: "-5")) == nil)
        #expect(OperationID.date(of: "op-1") == nil)
    }

    @Test("an operation's fingerprint is the canonical JSON of all but its opId, however its data was built")
    func fingerprint() throws {
        let data: [String: JSONValue] = ["z": 1, "a": ["é": "\"quoted\"\n", "b": [1.5, nil, true]], "m": "\u{1F600}"]
        for (base, data) in [(Int64?.some(7), Optional(data)), (nil, Optional(data)), (3, nil)] {
            let operation = SyncOperation(opId: OperationID.make(), collection: "notes", id: "n-1", op: data == nil ? .delete : .update,
                                          baseVersion: base, data: data)
            var object: [String: JSONValue] = ["collection": "notes", "id": "n-1", "op": .string(operation.op.rawValue)]
            if let base { object["baseVersion"] = .integer(base) }
            if let data { object["data"] = .object(data) }
            #expect(operation.fingerprintText == JSONValue.object(object).jsonText())
            var resent = operation
            resent.opId = OperationID.make()
            resent.data = try data.map { try #require(JSONValue(parsing: JSONValue.object($0).jsonText(sortedKeys: false)).objectValue) }
            #expect(resent.fingerprintText == operation.fingerprintText)
        }
    }
}
