import CairnProtocol
import Foundation
import Hummingbird
import NIOCore

/// `POST .../batch`: pushes of writers, within the configured size limits. Mounted at `v1/projects/:project`.
struct BatchRoutes: ProjectRouteGroup {
    let access: AccessControl
    let batches: BatchService
    let notifier: ChangeNotifier
    let metrics: ServerMetrics
    let clock: any WallClock
    let maximumBytes: Int
    let maximumOperations: Int

    func add(to routes: ProjectRoutes) {
        routes.on(.post, "batch", requires: .writer, action: "Pushing changes") { request, context, caller in
            let batch = try BatchRequest(json: await request.jsonBody(context: context, limit: maximumBytes))
            guard batch.operations.count <= maximumOperations else {
                throw ErrorBody.tooLarge("A batch holds at most \(maximumOperations) operations; split it")
            }
            let schema = try await access.schema(caller)
            let minimal = ReturnPreference.asksForMinimal(request.headers[values: .prefer])
            let outcome = try await batches.apply(
                batch, project: caller.project, schema: schema, user: caller.user, now: clock.now(),
                writeGuard: try await access.writeGuard(caller, schema: schema, collections: Set(batch.operations.map(\.collection))),
                hiddenFiles: try await access.hiddenFiles(FileReferences.ids(batch.operations, schema: schema), caller),
                schemaNumber: try SchemaEvolution.requestedNumber(request.headers[.cairnSchemaVersion]), minimalAnswers: minimal)
            metrics.pushed(outcome.results)
            await notifier.publish(project: caller.project, changes: outcome.changedCollections)
            return Response.jsonBytes(
                Self.body(outcome.resultTexts), headers: minimal ? [.preferenceApplied: CairnHeader.returnMinimal] : [:])
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
