import CairnProtocol
import Foundation
import HTTPTypes
import Hummingbird

/// A collection's changes feed and digest. Mounted at `v1/projects/:project`.
struct ChangesRoutes: ProjectRouteGroup {
    let access: AccessControl
    let feed: ChangesFeed
    let metrics: ServerMetrics
    let clock: any WallClock

    func add(to routes: ProjectRoutes) {
        routes.on(.get, "collections/:collection/changes", requires: .reader) { request, context, caller in
            let (schema, collection) = try await access.collection(caller, context)
            let query = try request.formQuery
            let changes = try ChangesRequest(since: query.get("since"), limit: query.get("limit"), where: query.get("where"))
            let page = try await feed.page(
                project: caller.project, collection: collection, schemaVersion: schema.version, request: changes,
                scope: try await access.scope(caller, collection), user: caller.user, clientID: request.headers[.cairnClientID],
                now: clock.now())
            metrics.pulled(page.records)
            // The cursor in the head too, so the next page can be asked for while this one's body travels.
            return Response.jsonBytes(page.body, headers: [.cairnCursor: page.cursor.token, .cairnHasMore: page.hasMore ? "true" : "false"])
        }
        routes.on(.get, "collections/:collection/digest", requires: .reader) { request, context, caller in
            let (_, collection) = try await access.collection(caller, context)
            let scope = try await access.scope(caller, collection)
            return try Response.json(try await feed.digest(project: caller.project, collection: collection, scope: scope, user: caller.user))
        }
    }
}
