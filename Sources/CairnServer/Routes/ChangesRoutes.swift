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
            let schema = try await access.schema(caller)
            let name = context.parameters.get("collection") ?? ""
            let query = try request.formQuery
            let requested = try SchemaEvolution.requestedNumber(request.headers[.cairnSchemaVersion])
            guard let collection = schema.collection(named: name) else {
                // A collection dropped since the caller's app build was made: nothing more comes (its pushes are refused).
                let translator = try await evolution.translator(project: caller.project, current: schema, requested: requested)
                guard translator.isOldBuild, translator.client?.collection(named: name) != nil else {
                    throw ErrorBody.notFound("collection \"\(name)\"")
                }
                let cursor = try ChangesRequest(since: query.get("since"), limit: nil, where: nil).cursor ?? FeedCursor(since: 0, snapshotHigh: nil)
                let empty = FeedRows(rows: [], hasMore: false, purgedThrough: 0, head: 0)
                return Response.jsonBytes(ChangesFeed.body(empty, cursor: cursor, schemaVersion: schema.version, schemaNumber: translator.number))
            }
            var changes = try ChangesRequest(since: query.get("since"), limit: query.get("limit"), where: query.get("where"))
            let translator = try await evolution.translator(project: caller.project, current: schema, requested: requested)
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
