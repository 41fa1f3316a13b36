import CairnProtocol
import Foundation
import Hummingbird
import NIOCore

extension SyncServer {
    func addBatchRoutes(to project: RouterGroup<CairnRequestContext>) {
        project.post("batch") { request, context in
            let access = try await self.access(request, context, minimum: .reader)
            guard access.role >= .writer else {
                throw APIError.forbidden("Pushing changes needs the writer role in \(access.project); you are \(access.role.rawValue)")
            }
            let batch = try BatchRequest(json: await request.jsonBody(context: context, limit: self.configuration.maximumBatchBytes))
            guard batch.operations.count <= self.configuration.maximumBatchOperations else {
                throw APIError.tooLarge("A batch holds at most \(self.configuration.maximumBatchOperations) operations; split it")
            }
            guard let schema = try await self.storage.schema(project: access.project) else {
                throw APIError.notFound("project \"\(access.project)\"")
            }
            let outcome = try await self.storage.applyBatch(
                project: access.project, batch: batch, schema: schema, user: access.user, now: self.clock.now())
            await self.notifier.publish(project: access.project, changes: outcome.changedCollections)
            var buffer = ByteBuffer()
            buffer.reserveCapacity(outcome.resultTexts.reduce(16) { $0 + $1.utf8.count + 1 })
            buffer.writeString(#"{"results":["#)
            for (index, text) in outcome.resultTexts.enumerated() {
                if index > 0 { buffer.writeString(",") }
                buffer.writeString(text)
            }
            buffer.writeString("]}")
            return Response.jsonBytes(buffer)
        }
    }
}
