import CairnProtocol
import Foundation

extension RemoteAPI {
    /// The longest an action call waits for the server: the longest backend timeout a schema may give, and a margin.
    static let actionTimeout: Duration = .seconds(ActionSchema.timeoutRange.upperBound + 5)

    /// `POST .../actions/{action}` with `idempotencyKey`: the backend's answer, or the server's error (a backend's
    /// refusal is `action_failed`, retryable only when its `details.retryable` says so). Retried in place only when
    /// the request may not have reached the server (the key makes that safe).
    func callAction(_ action: String, arguments: JSONValue, idempotencyKey: String, device: String?) async throws -> ActionCallAnswer {
        let body = try CairnJSON.encode(ActionCallRequest(arguments: arguments, idempotencyKey: idempotencyKey, device: device))
        let response = try await send(
            method: "POST", path: "/v1/projects/\(project)/actions/\(PercentEncoding.encode(action))", body: body,
            transfer: Transfer(timeout: max(timeout, Self.actionTimeout)))
        return try decode(ActionCallAnswer.self, response)
    }
}

extension CairnError {
    /// True when the server's answer to an action call settles it: the backend answered or refused (`action_failed`
    /// with `details.status`), or the call cannot succeed as it is (a role that may not call it, an action the schema
    /// does not have, a malformed call). A network failure, a `5xx`, a retryable `action_failed`, a sign-in problem
    /// (`401`), a too old app (`426`) or rate limiting leave the call queued.
    var settlesActionCall: Bool {
        if code == .actionFailed { return details?["status"] != nil }
        guard let httpStatus, (400..<500).contains(httpStatus) else { return false }
        return ![401, 408, 426, 429].contains(httpStatus)
    }
}
