@testable import Cairn
import CairnProtocol
import Foundation
import Testing

/// Inputs the fuzz targets (Fuzz/, scripts/fuzz/run.sh) found breaking a property of the SDK's scanners, kept so
/// the fixes stay fixed.
@Suite("Fuzz regressions: answer scanners")
struct ScannerFuzzRegressionTests {
    /// `batch-results`: an applied record's data holding bytes that are not UTF-8 was read with U+FFFD in their
    /// place, where the strict decoder refuses the answer (the page scanner refused it already).
    @Test("a batch answer whose data is not UTF-8 is refused")
    func batchDataNotUTF8() {
        var bytes = Array(#"{"results":[{"opId":"o-1","status":"applied","record":{"id":"n-1","version":3,"data":{"title":"x"#.utf8)
        bytes += [0xF7, 0xF7, 0xF7]
        bytes += Array(#""}}}]}"#.utf8)
        #expect(throws: (any Error).self) { try bytes.withUnsafeBufferPointer { try BatchResultsScanner.scan($0) } }
        let valid = Array(#"{"results":[{"opId":"o-1","status":"applied","record":{"id":"n-1","version":3,"data":{"title":"xé"}}}]}"#.utf8)
        let results = try? valid.withUnsafeBufferPointer { try BatchResultsScanner.scan($0) }
        #expect(results?.first?.dataText == #"{"title":"xé"}"#)
    }

    /// A member named twice reads as its last in the `Codable` models (and the strict parser): the scanners read the
    /// first, or both. The `changes-page` target's property caught each of these (inputs in Fuzz/Corpus/changes-page).
    @Test("a changes page whose members repeat reads as the strict parser reads it")
    func repeatedPageMembers() throws {
        let fields = [FieldSchema(name: "title", type: .string)]
        func scan(_ text: String) throws -> ScannedPage { try ScannedPage(page: PageBytes(Array(text.utf8)), fields: fields) }
        // data twice: the columns came from the first object, the data text from the second.
        let data = try scan(#"{"changes":[{"id":"a","version":1,"data":{"title":"x"},"data":{}}],"cursor":"c","hasMore":false}"#)
        #expect(data.changes.first?.values == [.absent])
        #expect(data.changes.first?.dataText == "{}")
        // deleted twice: a true stayed true.
        let deleted = try scan(#"{"changes":[{"id":"a","version":1,"deleted":true,"deleted":false,"data":{}}],"cursor":"c","hasMore":false}"#)
        #expect(deleted.changes.first?.removed == false)
        // changes twice: both lists were applied.
        let changes = try scan(#"{"changes":[{"id":"a","version":1,"data":{}}],"changes":[],"cursor":"c","hasMore":false}"#)
        #expect(changes.changes.isEmpty)
    }

    @Test("a batch result whose record repeats reads as its last record")
    func repeatedRecord() throws {
        let bytes = Array(#"{"results":[{"opId":"o","status":"applied","record":{"id":"n","version":1,"data":{"a":1}},"record":{"id":"n","version":2}}]}"#.utf8)
        let results = try bytes.withUnsafeBufferPointer { try BatchResultsScanner.scan($0) }
        #expect(results.first?.version == 2)
        #expect(results.first?.dataText == nil)
    }
}
