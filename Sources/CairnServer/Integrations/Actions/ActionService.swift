import CairnProtocol
import Foundation
import NIOCore

/// Calls actions for devices: answers a call whose idempotency key has a stored outcome again, without calling the
/// backend; otherwise posts the signed ``ActionInvocation`` to the action's URL within its timeout, stores a final
/// outcome (``ActionOutcome``) and answers it. The route decides who may call (``AccessControl``); this decides
/// what a call does.
///
/// ```swift
/// let answer = try await actions.call(action, ActionCallRequest(arguments: ["jobId": "j-7"]), caller: caller)
/// ```
struct ActionService: Sendable {
    let storage: any ServerStorage
    let access: AccessControl
    let clock: any WallClock

    /// Calls `action` for `caller`; throws `502 action_failed` for a backend that refused (stored, with
    /// `details.status`) or gave no usable answer (not stored, `details.retryable`), `422 validation_failed` for a
    /// malformed key or device, `409 conflict` for a key used for another action or by another caller.
    func call(_ action: ActionSchema, _ request: ActionCallRequest, caller: ProjectAccess) async throws -> ActionCallAnswer {
        let key = try Self.idempotencyKey(request)
        if let stored = try await storage.actionCall(project: caller.project, idempotencyKey: key) {
            return try Self.answer(stored, action: action, caller: caller, replayed: true)
        }
        let invocation = ActionInvocation(
            action: action, project: caller.project, idempotencyKey: key, arguments: request.arguments,
            caller: ActionInvocation.caller(caller, claims: try await access.claims(of: caller), device: try Self.device(request)))
        let secret = try await ActionSecret.of(project: caller.project, in: storage)
        let answer: OutboundRequest.Answer
        do {
            answer = try await invocation.request(secret: secret).send(timeout: .seconds(Int64(action.timeoutSeconds)))
        } catch {
            throw ActionOutcome.unanswered(
                action: action, idempotencyKey: key, why: "could not be reached or did not answer within \(action.timeoutSeconds) s")
        }
        guard let outcome = ActionOutcome(answer, action: action.name, idempotencyKey: key) else {
            let why = answer.isSuccess ? "answered \(answer.status) with a body that is not JSON" : "answered \(answer.status) (try again later)"
            throw ActionOutcome.unanswered(action: action, idempotencyKey: key, why: why)
        }
        let stored = try await storage.recordActionCall(StoredActionCall(
            project: caller.project, idempotencyKey: key, action: action.name, caller: caller.user, status: outcome.status,
            answer: outcome.storedText, completedAt: clock.now()))
        // Two calls with one key raced: both answer what was stored first.
        return try Self.answer(
            stored, action: action, caller: caller, replayed: stored.answer != outcome.storedText || stored.status != outcome.status)
    }

    /// The request's key, or a new one.
    private static func idempotencyKey(_ request: ActionCallRequest) throws -> String {
        guard let key = request.idempotencyKey else { return UUID().uuidString.lowercased() }
        guard Names.isValidID(key) else {
            throw ErrorBody.validation("idempotencyKey is 1 to 128 characters from [A-Za-z0-9_.:-]", field: "idempotencyKey")
        }
        return key
    }

    /// The request's device: at most 255 bytes without control characters.
    private static func device(_ request: ActionCallRequest) throws -> String? {
        guard let device = request.device else { return nil }
        guard device.utf8.count <= 255, !device.unicodeScalars.contains(where: { CharacterSet.controlCharacters.contains($0) }) else {
            throw ErrorBody.validation("device is at most 255 bytes without control characters", field: "device")
        }
        return device
    }

    /// The answer of a stored outcome: the backend's JSON, or its refusal thrown again.
    private static func answer(_ stored: StoredActionCall, action: ActionSchema, caller: ProjectAccess, replayed: Bool) throws -> ActionCallAnswer {
        // A key names one caller's call: another member's key is not theirs to replay (nor to learn the answer of).
        guard stored.action == action.name, stored.caller == caller.user else {
            throw ErrorBody(
                code: .conflict, message: "idempotencyKey \(stored.idempotencyKey) was used for another call; use a new key",
                details: ["field": "idempotencyKey"])
        }
        let value = try JSONValue(parsing: Array(stored.answer.utf8))
        guard (200..<300).contains(stored.status) else {
            var refusal = try JSONValueDecoder().decode(ErrorBody.self, from: value)
            if replayed { refusal.details?["replayed"] = true }
            throw refusal
        }
        return ActionCallAnswer(result: value, idempotencyKey: stored.idempotencyKey, replayed: replayed)
    }
}

extension ActionOutcome {
    /// The backend's status to store.
    var status: Int {
        switch self {
        case .answered: 200
        case .refused(let status, _): status
        }
    }

    /// The JSON text stored: the answer, or the refusal's error body.
    var storedText: String {
        switch self {
        case .answered(let value): value.jsonText()
        case .refused(_, let body): (try? CairnJSON.encode(body)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        }
    }
}
