import CairnProtocol
import Foundation
import HTTPTypes
import Hummingbird
import Logging

/// Gives every request an id (echoing a usable `X-Request-ID`), sets it on the response, and logs one line per
/// request: method, path without its query (cursors and filters may hold data), status and duration. Never headers
/// or bodies, so tokens and record data stay out of logs.
struct RequestLogMiddleware: RouterMiddleware {
    typealias Context = CairnRequestContext
    /// Counts each request by route, method and status, with its duration.
    let metrics: ServerMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        let requestID = Self.usableID(request.headers[HTTPField.Name(CairnHeader.requestID)!]) ?? UUID().uuidString
        context.requestID = requestID
        context.logger[metadataKey: "request_id"] = .string(requestID)
        let started = ContinuousClock.now
        var response: Response
        do {
            response = try await next(request, context)
        } catch {
            // ErrorMiddleware renders every error; this catches only what escapes it.
            response = try APIError(.internalServerError, .internalError, "The server failed. Retry later.")
                .response(from: request, context: context)
        }
        response.headers[HTTPField.Name(CairnHeader.requestID)!] = requestID
        let elapsed = ContinuousClock.now - started
        metrics.request(
            method: request.method.rawValue, route: context.endpointPath ?? "unmatched", status: response.status.code, duration: elapsed)
        let milliseconds = Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000
        context.logger.info(
            "request",
            metadata: [
                "method": .string(request.method.rawValue), "path": .string(request.uri.path),
                "status": .stringConvertible(response.status.code),
                "ms": .string(String(format: "%.1f", milliseconds)),
            ])
        return response
    }

    /// A request id we accept from callers: 1 to 128 visible ASCII characters.
    static func usableID(_ value: String?) -> String? {
        guard let value, (1...128).contains(value.utf8.count),
            value.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
        else { return nil }
        return value
    }
}
