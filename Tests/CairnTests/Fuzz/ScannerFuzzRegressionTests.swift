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
}
