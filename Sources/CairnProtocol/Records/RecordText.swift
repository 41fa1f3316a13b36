import Foundation

/// A record as the wire writers take it: the envelope's values, with the commit time and the data already JSON text,
/// as a server stores them, so a feed page or a batch answer never serialises data a second time.
///
/// ```swift
/// var bytes: [UInt8] = []
/// RecordText(id: "n-1", version: 7, updatedAt: "2026-11-22T10:00:00.000Z", updatedBy: "alice", deleted: false,
///            dataText: #"{"title":"Hi"}"#).write(into: &bytes)
/// ```
package struct RecordText: Sendable, Hashable {
    /// The record's id.
    package var id: String
    /// The version of this state.
    package var version: Int64
    /// The commit time as RFC 3339 text; `nil` writes no `updatedAt`.
    package var updatedAt: String?
    /// The user who committed it; `nil` writes no `updatedBy`.
    package var updatedBy: String?
    /// True for a tombstone, which is written without data.
    package var deleted: Bool
    /// The data object's JSON text; `nil` writes no `data`.
    package var dataText: String?

    /// The parts of a record state.
    package init(id: String, version: Int64, updatedAt: String?, updatedBy: String?, deleted: Bool, dataText: String?) {
        self.id = id
        self.version = version
        self.updatedAt = updatedAt
        self.updatedBy = updatedBy
        self.deleted = deleted
        self.dataText = dataText
    }

    /// The parts of `record`, its data made canonical JSON text (tombstones keep none).
    package init(_ record: Record) {
        self.init(
            id: record.id, version: record.version, updatedAt: record.updatedAt.map(RFC3339.string(from:)),
            updatedBy: record.updatedBy, deleted: record.deleted,
            dataText: record.deleted ? nil : JSONValue.object(record.data).jsonText())
    }

    /// Appends the record object of PROTOCOL.md, members in ``Record/CodingKeys`` order; a tombstone has no `data`.
    package func write(into bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "{"))
        var first = true
        Record.members.withNames { names in
            for (index, key) in Record.members.keys.enumerated() {
                switch key {
                case .data:
                    guard !deleted, let dataText else { continue }
                    bytes.appendMember(names[index], first: &first)
                    bytes.append(contentsOf: dataText.utf8)
                case .deleted:
                    bytes.appendMember(names[index], first: &first)
                    bytes.appendBool(deleted)
                case .id:
                    bytes.appendMember(names[index], first: &first)
                    JSONValue.writeString(id, into: &bytes)
                case .updatedAt:
                    guard let updatedAt else { continue }
                    bytes.appendMember(names[index], first: &first)
                    JSONValue.writeString(updatedAt, into: &bytes)
                case .updatedBy:
                    guard let updatedBy else { continue }
                    bytes.appendMember(names[index], first: &first)
                    JSONValue.writeString(updatedBy, into: &bytes)
                case .version:
                    bytes.appendMember(names[index], first: &first)
                    bytes.appendDecimal(version)
                }
            }
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// The record these parts stand for, its data parsed (an absent or non-object data reads as `[:]`).
    package func record() throws -> Record {
        let data = try dataText.map { try JSONValue(parsing: Array($0.utf8)).objectValue ?? [:] } ?? [:]
        return Record(
            id: id, version: version, updatedAt: updatedAt.flatMap(RFC3339.date(from:)), updatedBy: updatedBy, deleted: deleted,
            data: data)
    }
}

extension Record {
    /// The members in the order writers put them.
    package static let members = JSONMembers<CodingKeys>()

    /// This record's wire JSON, as ``RecordText`` writes it: the text every writer of the shape gives.
    package var jsonText: String {
        var bytes: [UInt8] = []
        RecordText(self).write(into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// This record as a JSON value, shaped as PROTOCOL.md's record (tombstones carry no data).
    public var jsonValue: JSONValue {
        var bytes: [UInt8] = []
        RecordText(self).write(into: &bytes)
        // The writer's text is valid JSON by construction (the property tests read it back).
        return (try? JSONValue(parsing: bytes)) ?? .null
    }
}
