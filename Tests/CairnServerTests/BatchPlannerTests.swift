import CairnProtocol
@testable import CairnServer
import Foundation
import Testing

@Suite("Batch rules without I/O")
struct BatchPlannerTests {
    func state(_ data: [String: JSONValue], version: Int64, deleted: Bool = false, fields: [String: Int64]) -> StoredRecordState {
        StoredRecordState(record: Record(id: "n1", version: version, deleted: deleted, data: data), fieldVersions: fields)
    }

    @Test("field versions: a new record's fields all change; an update moves only the fields it changes; a deletion all")
    func fieldVersions() {
        #expect(BatchPlanner.fieldVersions(previous: nil, newData: ["a": 1, "b": "x"], deleted: false, version: 4) == ["a": 4, "b": 4])
        #expect(BatchPlanner.fieldVersions(previous: nil, newData: [:], deleted: true, version: 4) == [:])
        let current = state(["a": 1, "b": "x"], version: 4, fields: ["a": 4, "b": 2])
        #expect(BatchPlanner.fieldVersions(previous: current, newData: ["a": 1, "b": "y", "c": true], deleted: false, version: 9)
            == ["a": 4, "b": 9, "c": 9])
        #expect(BatchPlanner.fieldVersions(previous: current, newData: [:], deleted: true, version: 9) == ["a": 9, "b": 9])
        let tombstone = state([:], version: 9, deleted: true, fields: ["a": 9, "b": 9])
        #expect(BatchPlanner.fieldVersions(previous: tombstone, newData: ["b": "z"], deleted: false, version: 12) == ["a": 9, "b": 12])
    }
}
