import CairnProtocol
import Foundation

/// What a backend's answer to an action call means, decided once: a JSON answer (2xx) and a refusal (a 3xx or 4xx
/// other than 429) are final and stored, so the same idempotency key answers them again; anything else (no answer in
/// time, no connection, a 5xx, a 429, a 2xx body that is not JSON) is retryable and not stored.
enum ActionOutcome: Sendable {
    /// The backend answered 2xx with this JSON (`null` for an empty body).
    case answered(JSONValue)
    /// The backend refused with this status: the `502 action_failed` answered for it.
    case refused(status: Int, ErrorBody)

    /// How much of a body that is not JSON a refusal's message quotes.
    static let excerptCharacters = 200

    /// The outcome of `answer`; `nil` when it is not final: a 2xx body that is not JSON, a 5xx (a proxy or a backend
    /// that is down or deploying) or a 429 (come back later).
    init?(_ answer: OutboundRequest.Answer, action: String, idempotencyKey: String) {
        guard answer.status < 500, answer.status != 429 else { return nil }
        let parsed = try? JSONValue(parsing: Array(answer.body))
        if answer.isSuccess {
            if answer.body.allSatisfy({ [0x20, 0x09, 0x0A, 0x0D].contains($0) }) {
                self = .answered(.null)
            } else if let parsed {
                self = .answered(parsed)
            } else {
                return nil
            }
            return
        }
        var details: [String: JSONValue] = ["status": .integer(Int64(answer.status)), "idempotencyKey": .string(idempotencyKey)]
        if let parsed { details["body"] = parsed }
        let said = parsed.flatMap(Self.message(in:)) ?? Self.excerpt(answer.body)
        let message = "The backend of action \(action) answered \(answer.status)" + (said.isEmpty ? "" : ": \(said)")
        self = .refused(status: answer.status, ErrorBody(code: .actionFailed, message: message, details: details))
    }

    /// The error answered when the backend could not be reached or gave no usable answer: retryable, not stored.
    static func unanswered(action: ActionSchema, idempotencyKey: String, why: String) -> ErrorBody {
        ErrorBody(
            code: .actionFailed,
            message: "The backend of action \(action.name) \(why); calling again with the same idempotency key is safe",
            details: ["retryable": true, "idempotencyKey": .string(idempotencyKey)])
    }

    /// A backend's own message: `error.message`, `message` or `error` when it is a string.
    private static func message(in value: JSONValue) -> String? {
        if let text = value["error"]?["message"]?.stringValue ?? value["message"]?.stringValue ?? value["error"]?.stringValue {
            return text
        }
        return nil
    }

    /// The start of a body that is not JSON, on one line.
    private static func excerpt(_ body: Data) -> String {
        let text = String(decoding: body.prefix(4 * excerptCharacters), as: UTF8.self)
        let line = String(text.unicodeScalars.map { CharacterSet.controlCharacters.contains($0) ? " " : Character($0) })
        return String(line.trimmingCharacters(in: .whitespaces).prefix(excerptCharacters))
    }
}
