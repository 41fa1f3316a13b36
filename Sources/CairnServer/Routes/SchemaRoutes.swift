import CairnProtocol
import Foundation
import HTTPTypes
import Hummingbird

/// `GET` and `PUT` of a project's schema, with `ETag` and `If-None-Match`; `GET ?version=N` answers an earlier
/// numbered schema. Mounted at `v1/projects/:project`.
struct SchemaRoutes: ProjectRouteGroup {
    let access: AccessControl
    let admin: ServerAdmin

    func add(to routes: ProjectRoutes) {
        routes.on(.get, "schema", requires: .reader) { request, context, caller in
            var schema = try await access.schema(caller)
            if let asked = try request.formQuery.get("version") {
                guard let number = Int(asked), number >= 0 else {
                    throw ErrorBody.validation("version must be a schema number (0 or more)", field: "version")
                }
                guard let kept = try await admin.storage.schemaVersions(project: caller.project).first(where: { $0.schema.number == number }) else {
                    throw ErrorBody(code: .notFound, message: "\(caller.project) has no schema version \(number) (its current one is \(schema.number))")
                }
                schema = kept.schema
            }
            let etag = "\"\(schema.version)\""
            if request.ifNoneMatch(etag) {
                return Response(status: .notModified, headers: [.eTag: etag])
            }
            return try Response.json(schema, headers: [.eTag: etag])
        }
        routes.on(.put, "schema", requires: .admin) { request, context, caller in
            // A key no level of a schema knows is a typo: refused, naming it, before anything is decoded.
            let document = try await request.decodeBody(JSONValue.self, context: context, limit: 1 << 20)
            try SchemaKeys.check(document)
            let schema = try CairnJSON.decode(Schema.self, from: Array(document.jsonText().utf8))
            try await access.checkTables(of: schema, replacing: try await access.schema(caller), context)
            let stored = try await admin.setSchema(project: caller.project, schema, migrate: false)
            if !stored.migrations.isEmpty {
                // The stored records are migrated in pages behind the answer; until then reads and writes bring each
                // record they touch to the new shape.
                let admin = admin, project = caller.project
                Task { try? await admin.migrate(project: project) }
            }
            return try Response.json(stored, headers: [.eTag: "\"\(stored.version)\""])
        }
    }
}
