import CairnProtocol
import Foundation
import GRDB
import Testing

@testable import Cairn

@Suite("Stored enum values")
struct StoredEnumTests {
    @Test("history kinds and conflict resolutions read back as enums; a value from a newer Cairn is store_failed")
    func unknownValues() throws {
        let test = try TestStore()
        let run = try test.store.history.begin(kind: .push)
        try test.store.history.end(run, summary: SyncSummary(), error: nil)
        #expect(try test.store.history.entries(limit: 5).map(\.kind) == [.push])
        try test.store.writer.write { db in try db.execute(sql: "UPDATE cairn_events SET kind = 'replicate'") }
        let error = #expect(throws: CairnError.self) { try test.store.history.entries(limit: 5) }
        #expect(error?.code == .storeFailed)
        #expect(error?.message.contains("cairn_events.kind") == true)
    }
}
