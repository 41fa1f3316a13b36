import CairnProtocol
import Foundation
import HTTPTypes
import Hummingbird

/// `GET` and `PUT` of a project's schema, with `ETag` and `If-None-Match`. Mounted at `v1/projects/:project`.
struct SchemaRoutes: ProjectRouteGroup {
    let access: AccessControl
    let admin: ServerAdmin

    func add(to routes: ProjectRoutes) {
        routes.on(.get, "schema", requires: .reader) { request, context, caller in
            let schema = try await access.schema(caller)
            let etag = "\"\(schema.version)\""
            if request.ifNoneMatch(etag) {
                return Response(status: .notModified, headers: [.eTag: etag])
            }
            return try Response.json(schema, headers: [.eTag: etag])
        }
        routes.on(.put, "schema", requires: .admin) { request, context, caller in
            let schema = try await request.decodeBody(Schema.self, context: context, limit: 1 << 20)
            let stored = try await admin.setSchema(project: caller.project, schema)
            return try Response.json(stored, headers: [.eTag: "\"\(stored.version)\""])
        }
    }
}
