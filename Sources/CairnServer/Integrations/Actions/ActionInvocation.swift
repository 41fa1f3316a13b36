import CairnProtocol
import Foundation

/// The request the server sends an action's backend: its JSON body (the project, the action, the idempotency key,
/// the arguments and the caller) and its headers, signed with the project's action secret.
///
/// ```json
/// {"project": "field", "action": "closeJob", "idempotencyKey": "5b0e...", "arguments": {"jobId": "j-7"},
///  "caller": {"user": "alice", "role": "writer", "claims": {"region": "north"}, "device": "iPad-7"}}
/// ```
struct ActionInvocation: Sendable {
    /// The action called.
    let action: ActionSchema
    /// The project it belongs to.
    let project: String
    /// The call's idempotency key, also sent as `Cairn-Idempotency-Key`: the backend may dedupe with it.
    let idempotencyKey: String
    /// The caller's arguments, as sent.
    let arguments: JSONValue
    /// Who calls: user, role, claims and device.
    let caller: JSONValue

    /// The exact bytes sent and signed.
    var body: Data {
        let value: JSONValue = [
            "project": .string(project), "action": .string(action.name), "idempotencyKey": .string(idempotencyKey),
            "arguments": arguments, "caller": caller,
        ]
        return Data(value.jsonText().utf8)
    }

    /// The signed POST to the action's URL.
    func request(secret: String) -> OutboundRequest {
        OutboundRequest(
            url: action.url, body: body, secret: secret,
            headers: ["Cairn-Action": action.name, "Cairn-Idempotency-Key": idempotencyKey])
    }

    /// The `caller` member for `access` with `claims`, calling from `device`.
    static func caller(_ access: ProjectAccess, claims: [String: JSONValue], device: String?) -> JSONValue {
        [
            "user": .string(access.user), "role": .string(access.role.rawValue), "claims": .object(claims),
            "device": device.map(JSONValue.string) ?? .null,
        ]
    }
}
