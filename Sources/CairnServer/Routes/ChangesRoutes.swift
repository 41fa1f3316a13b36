import CairnProtocol
import Foundation
import HTTPTypes
import Hummingbird

/// A collection's changes feed and digest; for admins, the feed as one member pulls it (`view-as`) and the version at
/// which each field of a record last changed. Mounted at `v1/projects/:project`.
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
            let started = ContinuousClock.now
            var changes = try ChangesRequest(
                since: query.get("since"), limit: query.get("limit"), where: query.get("where"), own: query.get("own"),
                pages: query.get(PageStream.parameter))
            let translator = try await evolution.translator(project: caller.project, current: schema, requested: requested)
            changes.filter = changes.filter.map { translator.incoming($0, collection: collection.name) }
            let scope = try await access.scope(caller, collection)
            let (feed, clock, clientID) = (feed, clock, request.headers[.cairnClientID])
            let read: @Sendable (ChangesRequest) async throws -> ChangesFeed.Page = { changes in
                try await feed.page(
                    project: caller.project, collection: collection, schemaVersion: schema.version, request: changes, scope: scope,
                    user: caller.user, clientID: clientID, now: clock.now(), translator: translator)
            }
            // The first page is read before the head leaves, so that its failures answer with their status.
            let page = try await read(changes)
            metrics.pulled(page.records)
            if changes.pages > 1 {
                let (metrics, changes) = (metrics, changes)
                let body = ChangesFeed.stream(
                    first: page, count: changes.pages, logger: context.logger, read: { try await read(changes.after($0)) },
                    sent: { metrics.pulled($0.records) })
                return Response(
                    status: .ok,
                    headers: [
                        .contentType: PageStream.mediaType,
                        .serverTiming: ServerTiming.header(CairnHeader.feedTimingMetric, since: started),
                    ], body: body)
            }
            // The cursor in the head too, so the next page can be asked for while this one's body travels.
            // And the time the page took here, so the client can tell the link's round trip from the server's work.
            return Response.jsonBytes(
                page.body,
                headers: [
                    .cairnCursor: page.cursor.token, .cairnHasMore: page.hasMore ? "true" : "false",
                    .serverTiming: ServerTiming.header(CairnHeader.feedTimingMetric, since: started),
                ])
        }
        routes.on(.get, "collections/:collection/view-as", requires: .admin, action: "Viewing as another user") { request, context, caller in
            let (schema, collection) = try await access.collection(caller, context)
            let query = try request.formQuery
            guard let user = query.get("user"), !user.isEmpty else { throw ErrorBody.validation("user is required", field: "user") }
            // The member's own scope, as their pulls get it: the same rules, role and stored claims.
            guard let member = try await access.member(user, in: caller.project) else {
                throw ErrorBody.notFound("member \"\(user)\" of \(caller.project)")
            }
            let changes = try ChangesRequest(since: query.get("since"), limit: query.get("limit"), where: query.get("where"))
            let page = try await feed.page(
                project: caller.project, collection: collection, schemaVersion: schema.version, request: changes,
                scope: try await access.scope(member, collection), user: user, clientID: nil, now: clock.now())
            return Response.jsonBytes(page.body)
        }
        routes.on(.get, "collections/:collection/records/:id/field-versions", requires: .admin, action: "Reading field versions") { _, context, caller in
            let (_, collection) = try await access.collection(caller, context)
            let id = context.parameters.get("id") ?? ""
            guard Names.isValidID(id), let found = try await access.storage.fieldVersions(project: caller.project, collection: collection.name, id: id)
            else { throw ErrorBody.notFound("record \"\(id)\" in \(collection.name)") }
            return try Response.json(JSONValue.object([
                "id": .string(id), "version": .integer(found.version), "fieldVersions": .object(found.fields.mapValues { .integer($0) }),
            ]))
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
