extension SyncOperation {
    /// The members an upload writes, in this order.
    package static let wireOrder = JSONMembers<CodingKeys>()

    /// The members of the fingerprint: all but `opId` and `tag`, sorted, as canonical JSON has them.
    package static let fingerprintOrder = JSONMembers(CodingKeys.allCases.filter { $0 != .opId && $0 != .tag }.sorted { $0.rawValue < $1.rawValue })

    /// Appends an operation object with the members of `order`, its data spliced in as text already made.
    ///
    /// - Parameters:
    ///   - dataText: the data or merge patch as JSON object text; `nil` writes no `data`.
    ///   - order: ``wireOrder`` for an upload, ``fingerprintOrder`` for the fingerprint.
    package static func write(
        opId: String, collection: String, id: String, op: OperationKind, baseVersion: Int64?, dataText: String?,
        schemaVersion: Int64? = nil, tag: String? = nil, order: JSONMembers<CodingKeys>, into bytes: inout [UInt8]
    ) {
        bytes.append(UInt8(ascii: "{"))
        var first = true
        order.withNames { names in
            for (index, key) in order.keys.enumerated() {
                switch key {
                case .opId:
                    bytes.appendMember(names[index], first: &first)
                    JSONValue.writeString(opId, into: &bytes)
                case .collection:
                    bytes.appendMember(names[index], first: &first)
                    JSONValue.writeString(collection, into: &bytes)
                case .id:
                    bytes.appendMember(names[index], first: &first)
                    JSONValue.writeString(id, into: &bytes)
                case .op:
                    bytes.appendMember(names[index], first: &first)
                    JSONValue.writeString(op.rawValue, into: &bytes)
                case .baseVersion:
                    guard let baseVersion else { continue }
                    bytes.appendMember(names[index], first: &first)
                    bytes.appendDecimal(baseVersion)
                case .data:
                    guard let dataText else { continue }
                    bytes.appendMember(names[index], first: &first)
                    bytes.append(contentsOf: dataText.utf8)
                case .schemaVersion:
                    guard let schemaVersion else { continue }
                    bytes.appendMember(names[index], first: &first)
                    bytes.appendDecimal(schemaVersion)
                case .tag:
                    guard let tag else { continue }
                    bytes.appendMember(names[index], first: &first)
                    JSONValue.writeString(tag, into: &bytes)
                }
            }
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// This operation's wire JSON, as an upload writes it.
    package var jsonText: String {
        var bytes: [UInt8] = []
        Self.write(
            opId: opId, collection: collection, id: id, op: op, baseVersion: baseVersion, dataText: canonicalDataText,
            schemaVersion: schemaVersion, tag: tag, order: Self.wireOrder, into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Canonical JSON of everything but `opId`: two sends of the same operation give the same text.
    public var fingerprintText: String { fingerprintText(dataText: canonicalDataText) }

    /// `data` as canonical JSON text (sorted keys, no spaces), or `nil` without data.
    public var canonicalDataText: String? { data.map { JSONValue.object($0).jsonText() } }

    /// ``fingerprintText`` around data text already made by ``canonicalDataText``, so a server that also stores
    /// that text serialises the data once.
    public func fingerprintText(dataText: String?) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity((dataText?.utf8.count ?? 0) + collection.utf8.count + id.utf8.count + 64)
        Self.write(
            opId: opId, collection: collection, id: id, op: op, baseVersion: baseVersion, dataText: dataText,
            schemaVersion: schemaVersion, order: Self.fingerprintOrder, into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Reads an operation from its parsed JSON, with the `DecodingError`s of the `Decodable` conformance.
    init(json: JSONValue, at path: [any CodingKey]) throws {
        let members = try BatchRequest.object(json, at: path)
        var read = SyncOperation(opId: "", collection: "", id: "", op: .create)
        for key in CodingKeys.allCases {
            switch key {
            case .opId: read.opId = try BatchRequest.string(members, key, at: path)
            case .collection: read.collection = try BatchRequest.string(members, key, at: path)
            case .id: read.id = try BatchRequest.string(members, key, at: path)
            case .op:
                let kind = try BatchRequest.string(members, key, at: path)
                guard let op = OperationKind(rawValue: kind) else {
                    throw DecodingError.dataCorrupted(.init(
                        codingPath: path + [key], debugDescription: "Cannot initialize OperationKind from invalid String value \(kind)"))
                }
                read.op = op
            case .baseVersion:
                read.baseVersion = try BatchRequest.member(members, key, at: path) { value, path in
                    guard let int = value.integerValue else { throw mismatch(expected: "an integer", value, path) }
                    return int
                }
            case .data:
                read.data = try BatchRequest.member(members, key, at: path) { value, path in try BatchRequest.object(value, at: path) }
            case .schemaVersion:
                read.schemaVersion = try BatchRequest.member(members, key, at: path) { value, path in
                    guard let int = value.integerValue, int >= 0 else { throw mismatch(expected: "a schema number (0 or more)", value, path) }
                    return int
                }
            case .tag:
                read.tag = try BatchRequest.member(members, key, at: path) { value, path in
                    guard let text = value.stringValue else { throw mismatch(expected: "a string", value, path) }
                    return text
                }
            }
        }
        self = read
    }
}
