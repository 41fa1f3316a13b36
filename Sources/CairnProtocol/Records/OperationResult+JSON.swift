extension OperationResult {
    /// The members in the order writers put them.
    package static let members = JSONMembers<CodingKeys>()

    /// Appends a result object, members in ``CodingKeys`` order, its records written around text already made.
    ///
    /// - Parameters:
    ///   - record: the committed state, when `applied`.
    ///   - current: the server's state, when `conflict`.
    ///   - error: why, when `rejected`.
    /// A `nil` `opId` leaves the member out (a minimal answer's applied write: results come in request order).
    package static func write(
        opId: String?, status: OperationStatus, record: RecordText?, current: RecordText?, error: ErrorBody?, into bytes: inout [UInt8]
    ) {
        bytes.append(UInt8(ascii: "{"))
        var first = true
        members.withNames { names in
            for (index, key) in members.keys.enumerated() {
                switch key {
                case .current:
                    guard let current else { continue }
                    bytes.appendMember(names[index], first: &first)
                    current.write(into: &bytes)
                case .error:
                    guard let error else { continue }
                    bytes.appendMember(names[index], first: &first)
                    error.jsonValue.write(into: &bytes)
                case .opId:
                    guard let opId else { continue }
                    bytes.appendMember(names[index], first: &first)
                    JSONValue.writeString(opId, into: &bytes)
                case .record:
                    guard let record else { continue }
                    bytes.appendMember(names[index], first: &first)
                    record.write(into: &bytes)
                case .status:
                    bytes.appendMember(names[index], first: &first)
                    JSONValue.writeString(status.rawValue, into: &bytes)
                }
            }
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// This result's wire JSON: the text every writer of the shape gives.
    package var jsonText: String {
        var bytes: [UInt8] = []
        Self.write(
            opId: opId, status: status, record: record.map(RecordText.init), current: current.map(RecordText.init), error: error,
            into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// This result as a JSON value.
    public var jsonValue: JSONValue {
        // The writer's text is valid JSON by construction (the property tests read it back).
        (try? JSONValue(parsing: Array(jsonText.utf8))) ?? .null
    }
}
