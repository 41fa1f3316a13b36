import CairnProtocol
import Foundation
import HTTPTypes
import Hummingbird

extension SyncServer {
    func addSchemaRoutes(to project: RouterGroup<CairnRequestContext>) {
        project.get("schema") { request, context in
            let access = try await self.access(request, context, minimum: .reader)
            guard let schema = try await self.storage.schema(project: access.project) else {
                throw APIError.notFound("project \"\(access.project)\"")
            }
            let etag = "\"\(schema.version)\""
            if let match = request.headers[.ifNoneMatch], Self.etagMatches(match, etag) {
                return Response(status: .notModified, headers: [.eTag: etag])
            }
            return try Response.json(schema, headers: [.eTag: etag])
        }
        project.put("schema") { request, context in
            let access = try await self.access(request, context, minimum: .admin)
            let schema = try await request.decodeBody(Schema.self, context: context, limit: 1 << 20)
            let stored = try await self.admin.setSchema(project: access.project, schema)
            return try Response.json(stored, headers: [.eTag: "\"\(stored.version)\""])
        }
    }

    /// `If-None-Match` may list several tags, or `*`.
    static func etagMatches(_ header: String, _ etag: String) -> Bool {
        header.split(separator: ",").contains { tag in
            let trimmed = tag.trimmingCharacters(in: .whitespaces)
            return trimmed == "*" || trimmed == etag || trimmed == "W/" + etag
        }
    }
}
