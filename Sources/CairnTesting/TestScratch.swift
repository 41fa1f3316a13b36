import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One folder per test process for the stores, files and data directories tests make, removed when the process
/// exits, so a run leaves nothing behind in the temporary folder (even when a test stops early).
///
/// ```swift
/// let path = TestScratch.url("store").appendingPathComponent("store.sqlite").path
/// ```
public enum TestScratch {
    /// The process's folder, made on first use.
    public static let root: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("cairn-tests-\(getpid())-\(UUID().uuidString.prefix(8))")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(at: TestScratch.root) }
        return url
    }()

    /// A new name in the process's folder: `prefix`, a UUID and `suffix` (nothing is created).
    public static func url(_ prefix: String, suffix: String = "") -> URL {
        root.appendingPathComponent("\(prefix)-\(UUID().uuidString)\(suffix)")
    }
}
