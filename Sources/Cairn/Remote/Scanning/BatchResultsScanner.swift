import CairnProtocol
import Foundation

/// One result of a batch answer, read without parsing an applied record's data: the data stays JSON text
/// (`dataText`), parsed only by whoever needs it.
struct ScannedResult: Sendable {
    var opId: String
    var status: OperationStatus
    /// The applied record's envelope, when `applied`.
    var version: Int64?
    var deleted: Bool = false
    var updatedAt: Date?
    var updatedBy: String?
    /// The applied record's data as JSON text: absent for tombstones, and for a write the server committed exactly as
    /// sent when the batch asked for minimal answers (`Prefer: return=minimal`).
    var dataText: String?
    /// The server's current state, when `conflict`.
    var current: Record?
    /// Why, when `rejected`.
    var error: ErrorBody?

    /// Why the server refused the operation (a refusal without a reason reads as `bad_response`).
    var refusal: ErrorBody { error ?? ErrorBody(code: .badResponse, message: "rejected without a reason") }

    /// The applied record with its data parsed; `sent` is the operation's data text, which a minimal answer left
    /// out because the server committed exactly it.
    func appliedRecord(id: String, sent: String?) throws -> Record? {
        guard status == .applied, let version else { return nil }
        let text = deleted ? nil : dataText ?? sent
        let data = try text.map { try JSONValue(parsing: Array($0.utf8)).objectValue ?? [:] } ?? [:]
        return Record(id: id, version: version, updatedAt: updatedAt, updatedBy: updatedBy, deleted: deleted, data: data)
    }
}

/// The answer of `POST .../batch` (`{"results": [...]}`) read in one pass.
enum BatchResultsScanner {
    /// Reads `bytes`; throws ``JSONParseError`` or `DecodingError` for malformed text or shapes.
    static func scan(_ bytes: UnsafeBufferPointer<UInt8>) throws -> [ScannedResult] {
        var scanner = JSONParser(bytes: bytes)
        var results: [ScannedResult]?
        try scanner.members { scanner, key in
            guard key == "results" else { return try scanner.skipValue() }
            var list: [ScannedResult] = []
            try scanner.elements { scanner in list.append(try result(&scanner)) }
            results = list
        }
        scanner.skipWhitespace()
        guard scanner.index == bytes.count else { throw scanner.fail("unexpected text after the answer") }
        guard let results else { throw scanner.fail("the answer has no results") }
        return results
    }

    private static func result(_ scanner: inout JSONParser) throws -> ScannedResult {
        var opId: String?
        var status: OperationStatus?
        var result = ScannedResult(opId: "", status: .rejected)
        try scanner.members { scanner, key in
            switch OperationResult.CodingKeys(rawValue: key) {
            case .opId:
                opId = try scanner.parseValue().stringValue
            case .status:
                status = try scanner.parseValue().stringValue.flatMap(OperationStatus.init(rawValue:))
            case .record:
                // A member named twice reads as its last, as the strict parser reads it.
                (result.version, result.deleted, result.updatedAt, result.updatedBy, result.dataText) = (nil, false, nil, nil, nil)
                try scanner.members { scanner, member in
                    switch Record.CodingKeys(rawValue: member) {
                    case .version: result.version = try scanner.parseValue().integerValue
                    case .deleted: result.deleted = try scanner.parseValue().boolValue ?? false
                    case .updatedAt: result.updatedAt = try scanner.parseValue().stringValue.flatMap(RFC3339.date(from:))
                    case .updatedBy: result.updatedBy = try scanner.parseValue().stringValue
                    case .data:
                        let start = scanner.index
                        guard scanner.peek == UInt8(ascii: "{") else { throw scanner.fail("data must be an object") }
                        try scanner.skipValue()
                        // Skipping does not check UTF-8: text that is not would be read with U+FFFD in its place.
                        guard String(validating: UnsafeBufferPointer(rebasing: scanner.bytes[start..<scanner.index]), as: UTF8.self) != nil
                        else { throw scanner.fail("invalid UTF-8 in the data of a result") }
                        result.dataText = scanner.text(start..<scanner.index)
                    case .id, nil: try scanner.skipValue()  // the id is the operation's own
                    }
                }
            case .current:
                result.current = try JSONValueDecoder().decode(Record.self, from: scanner.parseValue())
            case .error:
                result.error = try JSONValueDecoder().decode(ErrorBody.self, from: scanner.parseValue())
            case nil:
                try scanner.skipValue()
            }
        }
        // A minimal answer's applied write has no opId (its place in the results says which operation it answers).
        guard let status, opId != nil || status == .applied else { throw scanner.fail("a result lacks its opId or status") }
        result.opId = opId ?? ""
        result.status = status
        switch status {
        case .applied: guard result.version != nil else { throw scanner.fail("an applied result lacks its record") }
        case .conflict: guard result.current != nil else { throw scanner.fail("a conflict lacks the current state") }
        case .rejected: break
        }
        return result
    }
}
