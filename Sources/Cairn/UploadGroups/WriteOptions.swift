import CairnProtocol
import Foundation

/// How a local write is uploaded (SAP's `RequestOptions`): the upload group it belongs to, a tag the server keeps
/// with the operation for support, and HTTP headers sent with the batch that uploads it.
///
/// ```swift
/// let visit = WriteOptions(uploadGroup: "visit-118", customTag: "inspection-app/4.2", headers: ["X-Site": "north"])
/// try client.save("findings", id: "f-1", data: ["severity": 2], options: visit)
/// try await client.push(groups: ["visit-118"])         // only that group's writes
/// try client.hold(uploadGroup: "visit-118")           // or keep them local until released
/// ```
///
/// A record's changes upload in the order they were made, whatever their groups: a change made on top of a change in
/// another group (or one that is held) waits for it. Changes with different options are never combined.
public struct WriteOptions: Sendable, Hashable, Codable {
    /// The upload group: ``CairnClient/push(groups:)`` and ``CairnClient/sync(uploadGroups:)`` upload only the groups
    /// they name, and a held group (``CairnClient/hold(uploadGroup:)``) is not uploaded until released. 1 to 128
    /// characters of `[A-Za-z0-9_.:-]`; `nil`: no group.
    public var uploadGroup: String?
    /// A tag the server keeps in the operation's history (up to 200 characters, no control characters).
    public var customTag: String?
    /// HTTP headers sent with the batch that uploads the write (and given to a ``CollectionSyncTask``): writes with
    /// different headers go in different batches. Names are HTTP tokens; `Authorization`, `Content-*`, `Accept*`,
    /// `Host`, `Prefer`, `Connection`, `Transfer-Encoding`, `X-Request-ID` and `Cairn-*` are Cairn's own.
    public var headers: [String: String]

    /// Options; the default has no group, no tag and no headers.
    public init(uploadGroup: String? = nil, customTag: String? = nil, headers: [String: String] = [:]) {
        self.uploadGroup = uploadGroup
        self.customTag = customTag
        self.headers = headers
    }

    /// No group, no tag, no headers: how a write without options is uploaded.
    public static let none = WriteOptions()

    /// The headers Cairn sets itself, which options may not set.
    static let reservedHeaders: Set<String> = [
        "authorization", "host", "prefer", "connection", "transfer-encoding", "x-request-id", "accept", "te", "upgrade", "expect",
    ]

    /// Checks the options; an `invalid_argument` error names what is wrong.
    func validate() throws {
        if let uploadGroup, !Names.isValidID(uploadGroup) {
            throw CairnError.invalid("upload group \"\(uploadGroup)\" must be 1-128 characters of [A-Za-z0-9_.:-]")
        }
        if let customTag, !SyncOperation.isValidTag(customTag) {
            throw CairnError.invalid("a custom tag is at most 200 characters, without control characters")
        }
        for (name, value) in headers {
            let lower = name.lowercased()
            guard !name.isEmpty, name.utf8.allSatisfy(Self.isTokenByte) else {
                throw CairnError.invalid("\"\(name)\" is not an HTTP header name")
            }
            guard !Self.reservedHeaders.contains(lower), !lower.hasPrefix("content-"), !lower.hasPrefix("accept-"), !lower.hasPrefix("cairn-")
            else { throw CairnError.invalid("the header \(name) is set by Cairn itself; a write may not set it") }
            guard value.utf8.count <= 4096, !value.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" }) else {
                throw CairnError.invalid("the value of the header \(name) must be at most 4096 bytes on one line")
            }
        }
    }

    /// The headers as the queue keeps them: JSON text with sorted names, `nil` without headers.
    var headersText: String? {
        headers.isEmpty ? nil : JSONValue.object(headers.mapValues(JSONValue.string)).jsonText()
    }

    /// Headers kept by the queue as ``headersText``.
    static func headers(fromText text: String?) -> [String: String] {
        guard let text, case .object(let members)? = try? JSONValue(parsing: Data(text.utf8)) else { return [:] }
        return members.compactMapValues(\.stringValue)
    }

    /// RFC 9110 `tchar`.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        default: "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}
