import CairnProtocol
import Foundation
import HTTPTypes
import Hummingbird

/// A collection's changes feed and digest. Mounted at `v1/projects/:project`.
struct ChangesRoutes: ProjectRouteGroup {
    let access: AccessControl
    let feed: ChangesFeed
    let evolution: SchemaEvolution
    let metrics: ServerMetrics
    let clock: any WallClock

    func add(to routes: ProjectRoutes) {
        routes.on(.get, "collections/:collection/changes", requires: .reader) { request, context, caller in
            let (schema, collection) = try await access.collection(caller, context)
            let query = try request.formQuery
            var changes = try ChangesRequest(since: query.get("since"), limit: query.get("limit"), where: query.get("where"))
            let translator = try await evolution.translator(
                project: caller.project, current: schema, requested: SchemaEvolution.requestedNumber(request.headers[.cairnSchemaVersion]))
            changes.filter = changes.filter.map { translator.incoming($0, collection: collection.name) }
            let page = try await feed.page(
                project: caller.project, collection: collection, schemaVersion: schema.version, request: changes,
                scope: try await access.scope(caller, collection), user: caller.user, clientID: request.headers[.cairnClientID],
                now: clock.now(), translator: translator)
            metrics.pulled(page.records)
            return Response.jsonBytes(page.body)
        }
        routes.on(.get, "collections/:collection/digest", requires: .reader) { request, context, caller in
            let (schema, collection) = try await access.collection(caller, context)
            // An app build below the window is told to update here too.
            _ = try await evolution.translator(
                project: caller.project, current: schema, requested: SchemaEvolution.requestedNumber(request.headers[.cairnSchemaVersion]))
            let scope = try await access.scope(caller, collection)
            return try Response.json(try await feed.digest(project: caller.project, collection: collection, scope: scope, user: caller.user))
        }
    }
}
