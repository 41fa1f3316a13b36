import CairnProtocol
import Foundation

/// `changes-page`: the SDK's fast page scanner against the strict parser and the `Codable` page. A page the `Codable`
/// decoder reads, the scanner reads with the same changes, field values and cursor (except shapes it refuses on
/// purpose: a live change without data, a negative total, and a malformed member named again later); a page the scanner reads is strict JSON, and every value
/// it took agrees with the parsed page.
enum ChangesPageTarget {
    static let fields = [
        FieldSchema(name: "title", type: .string), FieldSchema(name: "count", type: .integer), FieldSchema(name: "done", type: .boolean),
        FieldSchema(name: "tags", type: .json), FieldSchema(name: "due", type: .datetime), FieldSchema(name: "score", type: .number),
    ]

    static func run(_ bytes: [UInt8]) {
        let page = PageBytes(bytes)
        let scanned = try? ScannedPage(page: page, fields: fields)
        let codable = try? CairnJSON.decode(ChangesPage.self, from: bytes)
        if let codable, codable.total ?? 0 >= 0, codable.changes.allSatisfy({ $0.deleted || $0.gone || $0.data != nil }) {
            guard let scanned else {
                return require(hasRepeatedMembers(bytes), "the scanner refuses a page Codable reads: \(show(bytes))")
            }
            require(scanned.cursor == codable.cursor && scanned.hasMore == codable.hasMore && scanned.total == codable.total,
                    "cursor, hasMore or total differ: \(show(bytes))")
            require(scanned.changes.count == codable.changes.count, "change counts differ: \(show(bytes))")
            for (change, expected) in zip(scanned.changes, codable.changes) {
                require(change.id == expected.id && change.version == expected.version, "id or version differ: \(show(bytes))")
                require(change.removed == (expected.deleted || expected.gone) && change.gone == expected.gone, "deleted or gone differ: \(show(bytes))")
                require(change.updatedAt.flatMap(RFC3339.date(from:)) == expected.updatedAt, "updatedAt differs: \(show(bytes))")
                require(change.updatedBy == expected.updatedBy, "updatedBy differs: \(show(bytes))")
                if let data = expected.data {
                    check(change, data: data, bytes)
                } else {
                    require(change.dataRange == nil, "the scanner found data Codable did not: \(show(bytes))")
                }
            }
        }
        guard let scanned else { return }
        guard let tree = try? JSONValue(parsing: bytes) else {
            // Skipped members are not checked for UTF-8 (the one leniency of skipping); nothing else may be wrong.
            return require(String(validating: bytes, as: UTF8.self) == nil, "the scanner reads a page that is not JSON: \(show(bytes))")
        }
        require(scanned.cursor == tree["cursor"]?.stringValue && scanned.hasMore == tree["hasMore"]?.boolValue
                && scanned.total.map(Int64.init) == tree["total"]?.integerValue,
                "cursor, hasMore or total differ from the parsed page: \(show(bytes))")
        let changes = tree["changes"]?.arrayValue ?? []
        require(scanned.changes.count == changes.count, "the scanner counts other changes than the parsed page: \(show(bytes))")
        for (change, expected) in zip(scanned.changes, changes) {
            require(change.id == expected["id"]?.stringValue && change.version == expected["version"]?.integerValue,
                    "id or version differ from the parsed page: \(show(bytes))")
            let gone = expected["gone"] == .bool(true)
            require(change.gone == gone && change.removed == (gone || expected["deleted"] == .bool(true)),
                    "deleted or gone differ from the parsed page: \(show(bytes))")
            require(change.updatedAt == expected["updatedAt"]?.stringValue && change.updatedBy == expected["updatedBy"]?.stringValue,
                    "updatedAt or updatedBy differ from the parsed page: \(show(bytes))")
            if let data = expected["data"] {
                guard let members = data.objectValue else { return require(false, "the scanner took data that is no object: \(show(bytes))") }
                check(change, data: members, bytes)
            } else {
                require(change.dataRange == nil, "the scanner found data the parsed page lacks: \(show(bytes))")
            }
        }
    }

    /// The change's data text and column values say what `data` says.
    static func check(_ change: ScannedChange, data: [String: JSONValue], _ bytes: [UInt8]) {
        guard let text = change.dataText else { return require(false, "the data text is missing: \(show(bytes))") }
        require((try? JSONValue(parsing: Array(text.utf8))) == .object(data), "the data text differs from the data: \(show(bytes))")
        for (field, value) in zip(fields, change.values) {
            let expected = data[field.name] ?? .null
            let actual: JSONValue?
            switch value {
            case .absent: actual = nil
            case .integer(let int): actual = .integer(int)
            case .number(let double): actual = .number(double)
            case .bool(let bool): actual = .bool(bool)
            case .text(let text): actual = .string(text)
            case .bytes(let range):
                let slice = Array(bytes[range])
                actual = field.type == .json ? try? JSONValue(parsing: slice) : .string(String(decoding: slice, as: UTF8.self))
            }
            let isAbsent = expected.isNull || (field.type != .json && (expected.arrayValue != nil || expected.objectValue != nil))
            if isAbsent {
                require(actual == nil, "field \(field.name) should be absent: \(show(bytes))")
            } else {
                require(actual == expected, "field \(field.name) differs from the data: \(show(bytes))")
            }
        }
    }
}
