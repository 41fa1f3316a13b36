import Foundation

/// One action a schema declares: a backend URL the server calls for a device (`POST .../actions/NAME`), signed as
/// webhooks are, with the least role a caller needs and how long the backend may take.
///
/// ```swift
/// let schema = Schema(collections: [...], actions: [
///     ActionSchema(name: "closeJob", url: "https://erp.example/close", timeoutSeconds: 10)])
/// ```
public struct ActionSchema: Codable, Sendable, Hashable {
    /// The action's name, unique in the schema: a letter, then up to 62 letters, digits and `_` (`closeJob`).
    public var name: String
    /// The backend's absolute `http` or `https` URL.
    public var url: String
    /// How long the server waits for the backend's answer: 1 to 60 seconds (10 by default).
    public var timeoutSeconds: Int
    /// The least role a member needs to call it (`writer` by default).
    public var role: Role

    /// The timeout when none is given.
    public static let defaultTimeoutSeconds = 10
    /// The timeouts a schema may give.
    public static let timeoutRange = 1...60

    /// Declares an action.
    public init(name: String, url: String, timeoutSeconds: Int = ActionSchema.defaultTimeoutSeconds, role: Role = .writer) {
        self.name = name
        self.url = url
        self.timeoutSeconds = timeoutSeconds
        self.role = role
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case name, url, timeoutSeconds, role }

    /// Decodes an action object; an absent `timeoutSeconds` reads as 10, an absent `role` as `writer`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        url = try container.decode(String.self, forKey: .url)
        timeoutSeconds = try container.decodeIfPresent(Int.self, forKey: .timeoutSeconds) ?? Self.defaultTimeoutSeconds
        role = try container.decodeIfPresent(Role.self, forKey: .role) ?? .writer
    }

    /// The action as canonical JSON (every member written), for the schema's version digest.
    var jsonValue: JSONValue {
        ["name": .string(name), "url": .string(url), "timeoutSeconds": .integer(Int64(timeoutSeconds)), "role": .string(role.rawValue)]
    }

    /// Whether `name` may name an action: a letter, then up to 62 letters, digits and `_`.
    public static func isValidName(_ name: String) -> Bool {
        let utf8 = Array(name.utf8)
        guard (1...63).contains(utf8.count), utf8[0].isASCIILetter else { return false }
        return utf8.allSatisfy { $0.isASCIILetter || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: "_") }
    }

    /// Checks the name, timeout and URL; throws `validation_failed` naming the problem.
    func validate() throws(ErrorBody) {
        guard Self.isValidName(name) else {
            throw .validation("action name \"\(name)\" must be a letter then up to 62 letters, digits and _", field: "actions")
        }
        guard Self.timeoutRange.contains(timeoutSeconds) else {
            throw .validation("action \"\(name)\": timeoutSeconds must be from 1 to 60", field: "actions")
        }
        guard let url = URL(string: url), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
            let host = url.host, !host.isEmpty
        else {
            throw .validation("action \"\(name)\": url must be an absolute http or https URL", field: "actions")
        }
    }
}

extension UInt8 {
    /// `A`-`Z` or `a`-`z`.
    fileprivate var isASCIILetter: Bool {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(self) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(self)
    }
}
