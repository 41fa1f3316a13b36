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
}
