import CairnProtocol
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Renders every error as PROTOCOL.md's JSON error body. Bad input never becomes a 500: only errors the server
/// did not expect do, and those are logged without request data.
struct ErrorMiddleware: RouterMiddleware {
    typealias Context = CairnRequestContext
    /// The server's storage, which tells which of its errors mean "unavailable".
    let storage: any ServerStorage
    /// Whether the storage is full: a write refused for lack of space starts an episode, a write that succeeds ends it.
    let space: StorageSpaceMonitor

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            let response = try await next(request, context)
            if space.isFull, request.method != .get, request.method != .head, response.status.code < 300 { space.wrote() }
            return response
        } catch {
            if OutOfSpace.matches(error) || storage.isOutOfSpace(error) {
                // Logged once per episode by the monitor, not once per request.
                space.refused(error)
                return try Self.outOfSpace(storage.isUnavailable(error)).response(from: request, context: context)
            }
            let apiError = Self.apiError(for: error, request: request, storage: storage)
            if apiError.status.code >= 500 {
                context.logger.error(
                    "request failed",
                    metadata: ["error": .string(String(describing: type(of: error))), "reason": .string(storage.describe(error))])
            }
            return try apiError.response(from: request, context: context)
        }
    }

    static func apiError(for error: any Error, request: Request, storage: any ServerStorage) -> APIError {
        switch error {
        case let error as APIError:
            return error
        case let error as ErrorBody:
            return APIError.from(error)
        case let error as HTTPError:
            switch error.status {
            case .notFound, .methodNotAllowed:
                return unrouted(request)
            case .contentTooLarge:
                return .tooLarge("The request body is too large")
            case .unauthorized:
                return .unauthorized()
            default:
                return error.status.code < 500
                    ? APIError(error.status, .badRequest, error.body ?? "The request could not be read")
                    : APIError(.internalServerError, .internalError, "The server failed. Retry later.")
            }
        case is NIOTooManyBytesError:
            return .tooLarge("The request body is too large")
        case let error as JSONParseError:
            return .badRequest("The body is not valid JSON: \(error)")
        case let error as DecodingError:
            return describe(error)
        case let error where storage.isUnavailable(error):
            return APIError(.serviceUnavailable, .unavailable, "The database cannot be reached; retry later", headers: [.retryAfter: "5"])
        default:
            return APIError(.internalServerError, .internalError, "The server failed. Retry later.")
        }
    }

    /// The answer to a write refused for lack of space: `507 storage_full` for the server's own disk; `503 unavailable`
    /// when the database is another server's (PostgreSQL), as for any database that cannot take writes now.
    static func outOfSpace(_ databaseElsewhere: Bool) -> APIError {
        databaseElsewhere
            ? APIError(.serviceUnavailable, .unavailable, "The database's disk is full; retry later", headers: [.retryAfter: "30"])
            : APIError(HTTPResponse.Status(code: 507, reasonPhrase: "Insufficient Storage"), .storageFull, "The server's storage is full; retry later", headers: [.retryAfter: "30"])
    }

    /// The answer for a request no route took: `405` with `Allow` when the path is declared with other methods,
    /// else `404`.
    static func unrouted(_ request: Request) -> APIError {
        let method = request.method.rawValue
        guard let allowed = DeclaredRoutes.served.allowedMethods(for: request.uri.path), !allowed.contains(method) else {
            return APIError(.notFound, .notFound, "No route for \(method) \(request.uri.path)")
        }
        return APIError(
            .methodNotAllowed, .methodNotAllowed, "\(method) is not supported here; use \(allowed.joined(separator: " or "))",
            headers: [.allow: allowed.joined(separator: ", ")])
    }

    /// A `validation_failed` error that names where the body's shape was wrong (never the values).
    static func describe(_ error: DecodingError) -> APIError {
        func path(_ codingPath: [any CodingKey]) -> String {
            let text = codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            return text.hasPrefix(".") ? String(text.dropFirst()) : (text.isEmpty ? "body" : text)
        }
        switch error {
        case .keyNotFound(let key, let context):
            let field = path(context.codingPath + [key])
            return .validation("\(field) is missing", field: field)
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            let field = path(context.codingPath)
            return .validation("\(field): \(context.debugDescription)", field: field)
        @unknown default:
            return .validation("The body has the wrong shape")
        }
    }
}
