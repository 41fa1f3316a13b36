import Foundation

extension Change {
    /// The members in the order the feed writes them.
    package static let members = JSONMembers<CodingKeys>()

    /// Appends a change object of the feed, members in ``CodingKeys`` order, around a record's commit time and data
    /// already text (a server's stored row): a `gone` marker carries its id and version only, a tombstone no data.
    ///
    /// The parts are separate arguments, not a ``RecordText``, so a feed page of thousands of rows copies no strings.
    ///
    /// - Parameters:
    ///   - updatedAt: the commit time as RFC 3339 text; `nil` writes no `updatedAt`.
    ///   - updatedBy: who committed it; `nil` writes no `updatedBy`.
    ///   - dataText: the data object's JSON text; `nil` writes no `data`.
    ///   - gone: true for a record that changed and no longer matches the pull's filter.
    package static func write(
        id: String, version: Int64, updatedAt: String?, updatedBy: String?, deleted: Bool, dataText: String?, gone: Bool,
        into bytes: inout [UInt8]
    ) {
        bytes.append(UInt8(ascii: "{"))
        var first = true
        members.withNames { names in
            for (index, key) in members.keys.enumerated() {
                switch key {
                case .id:
                    bytes.appendMember(names[index], first: &first)
                    JSONValue.writeString(id, into: &bytes)
                case .version:
                    bytes.appendMember(names[index], first: &first)
                    bytes.appendDecimal(version)
                case .gone:
                    guard gone else { continue }
                    bytes.appendMember(names[index], first: &first)
                    bytes.appendBool(true)
                case .updatedAt:
                    guard !gone, let updatedAt else { continue }
                    bytes.appendMember(names[index], first: &first)
                    JSONValue.writeString(updatedAt, into: &bytes)
                case .updatedBy:
                    guard !gone, let updatedBy else { continue }
                    bytes.appendMember(names[index], first: &first)
                    JSONValue.writeString(updatedBy, into: &bytes)
                case .deleted:
                    guard !gone else { continue }
                    bytes.appendMember(names[index], first: &first)
                    bytes.appendBool(deleted)
                case .data:
                    guard !gone, !deleted, let dataText else { continue }
                    bytes.appendMember(names[index], first: &first)
                    bytes.append(contentsOf: dataText.utf8)
                }
            }
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// This change's wire JSON, as the feed writes it.
    package var jsonText: String {
        var bytes: [UInt8] = []
        Change.write(
            id: id, version: version, updatedAt: updatedAt.map(RFC3339.string(from:)), updatedBy: updatedBy, deleted: deleted,
            dataText: data.map { JSONValue.object($0).jsonText() }, gone: gone, into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }
}
