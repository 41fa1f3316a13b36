import CairnProtocol

/// How a member's claims are stored: a JSON object's canonical text in `members.claims`.
enum ClaimsColumn {
    static func encode(_ claims: [String: JSONValue]) -> String { JSONValue.object(claims).jsonText() }

    static func decode(_ text: String) throws -> [String: JSONValue] {
        guard case .object(let claims) = try JSONValue(parsing: Array(text.utf8)) else { return [:] }
        return claims
    }

    /// `not_found` for claims of someone who is not a member.
    static func notMember(user: String, project: String) -> ErrorBody {
        ErrorBody(code: .notFound, message: "user \"\(user)\" is not a member of project \"\(project)\"")
    }
}
