import CairnProtocol
import Foundation

/// `batch-results`: the SDK's batch answer scanner against the strict parser and the `Codable` answer. An answer the
/// `Codable` decoder reads, the scanner reads with the same results (except shapes it refuses on purpose: an applied
/// result without its record, a conflict without the current state); an answer the scanner reads is strict JSON
/// and its opIds, statuses and versions agree with the parsed answer.
enum BatchResultsTarget {
    static func run(_ bytes: [UInt8]) {
        let scanned = try? bytes.withUnsafeBufferPointer { try BatchResultsScanner.scan($0) }
        let codable = try? CairnJSON.decode(BatchResponse.self, from: bytes)
        if let codable, codable.results.allSatisfy({ $0.status != .applied || $0.record != nil }),
            codable.results.allSatisfy({ $0.status != .conflict || $0.current != nil })
        {
            guard let scanned else {
                return require(hasRepeatedMembers(bytes), "the scanner refuses an answer Codable reads: \(show(bytes))")
            }
            require(scanned.count == codable.results.count, "result counts differ: \(show(bytes))")
            for (result, expected) in zip(scanned, codable.results) {
                require(result.opId == expected.opId && result.status == expected.status, "opId or status differ: \(show(bytes))")
                require(result.current == expected.current && result.error == expected.error, "current or error differ: \(show(bytes))")
                if expected.status == .applied, var record = expected.record {
                    if record.deleted { record.data = [:] }
                    let applied = try? result.appliedRecord(id: record.id, sent: nil)
                    require(applied == record, "the applied record differs: \(show(bytes))")
                }
            }
        }
        guard let scanned else { return }
        guard let tree = try? JSONValue(parsing: bytes) else {
            // Skipped members are not checked for UTF-8 (the one leniency of skipping), but data the SDK keeps must be.
            require(String(validating: bytes, as: UTF8.self) == nil, "the scanner reads an answer that is not JSON: \(show(bytes))")
            let replacement: [UInt8] = [0xEF, 0xBF, 0xBD]
            let hasReplacement = bytes.indices.dropLast(2).contains { Array(bytes[$0..<($0 + 3)]) == replacement }
            for result in scanned where !hasReplacement {
                require(!(result.dataText ?? "").contains("\u{FFFD}"), "invalid UTF-8 in an applied record's data is read as U+FFFD: \(show(bytes))")
            }
            return
        }
        let results = tree["results"]?.arrayValue ?? []
        require(scanned.count == results.count, "the scanner counts other results than the parsed answer: \(show(bytes))")
        for (result, expected) in zip(scanned, results) {
            require(result.opId == expected["opId"]?.stringValue ?? "", "opId differs from the parsed answer: \(show(bytes))")
            require(result.status.rawValue == expected["status"]?.stringValue, "status differs from the parsed answer: \(show(bytes))")
            if result.status == .applied {
                require(result.version == expected["record"]?["version"]?.integerValue, "version differs from the parsed answer: \(show(bytes))")
                let data = expected["record"]?["data"]
                require(result.dataText.flatMap { try? JSONValue(parsing: Array($0.utf8)) } == data,
                        "data differs from the parsed answer: \(show(bytes))")
            }
        }
    }
}
