import CairnProtocol
import Foundation
import Hummingbird
import NIOCore

/// `POST .../batch`: pushes of writers, within the configured size limits. Mounted at `v1/projects/:project`.
struct BatchRoutes: ProjectRouteGroup {
    let access: AccessControl
    let batches: BatchService
    let clock: any WallClock
    let maximumBytes: Int
    let maximumOperations: Int

    func add(to routes: ProjectRoutes) {
        routes.on(.post, "batch", requires: .writer, action: "Pushing changes") { request, context, caller in
            let batch = try BatchRequest(json: await request.jsonBody(context: context, limit: maximumBytes))
            guard batch.operations.count <= maximumOperations else {
                throw ErrorBody.tooLarge("A batch holds at most \(maximumOperations) operations; split it")
            }
            let minimal = ReturnPreference.asksForMinimal(request.headers[values: .prefer])
            let positional = minimal && ReturnPreference.asksForPositionalResults(request.headers[values: .prefer])
            let outcome = try await batches.push(
                batch, caller: caller, now: clock.now(),
                schemaNumber: try SchemaEvolution.requestedNumber(request.headers[.cairnSchemaVersion]), minimalAnswers: minimal,
                positionalAnswers: positional)
            let applied = positional ? "\(CairnHeader.returnMinimal), \(CairnHeader.positionalResults)" : CairnHeader.returnMinimal
            return Response.jsonBytes(Self.body(outcome.resultTexts), headers: minimal ? [.preferenceApplied: applied] : [:])
        }
    }

    /// `{"results":[...]}` around the result texts already made.
    static func body(_ resultTexts: [String]) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(resultTexts.reduce(16) { $0 + $1.utf8.count + 1 })
        buffer.writeStaticString(#"{"results":["#)
        for (index, text) in resultTexts.enumerated() {
            if index > 0 { buffer.writeStaticString(",") }
            buffer.writeString(text)
        }
        buffer.writeStaticString("]}")
        return buffer
    }
}
