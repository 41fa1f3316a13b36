import CairnProtocol
import Foundation
import HTTPTypes
import Hummingbird

/// A project's files (PROTOCOL.md, Files): create, upload, complete, search, metadata, download, change, share and
/// delete. Readers search and download; writers do the rest; a private file's uploader and admins share it. Mounted at `v1/projects/:project`.
struct FileRoutes: ProjectRouteGroup {
    let access: AccessControl
    let files: FileService

    func add(to routes: ProjectRoutes) {
        routes.on(.post, "files", requires: .writer, action: "Uploading files") { request, context, caller in
            let body = try await request.decodeBody(NewFileRequest.self, context: context, limit: 64 * 1024)
            if let target = body.attachTo { try await access.checkMayWrite(collection: target.collection, id: target.id, setting: [:], caller) }
            let file = try await files.create(body, project: caller.project, user: caller.user, schema: try await access.schema(caller))
            let metadata = try await files.metadata(file)
            return try Response.json(metadata, status: .created, headers: [.location: metadata.uploadUrl])
        }
        routes.on(.get, "files", requires: .reader) { request, context, caller in
            let list = try await files.search(project: caller.project, query: try Self.query(request.formQuery)) { file in
                try await access.mayRead(file, caller)
            }
            return try Response.json(list)
        }
        routes.on(.get, "files/:file", requires: .reader) { request, context, caller in
            let file = try await readableFile(context, caller)
            return try Response.json(try await files.metadata(file))
        }
        routes.on(.patch, "files/:file", requires: .writer, action: "Changing files") { request, context, caller in
            let update = try await request.decodeBody(FileUpdate.self, context: context, limit: 64 * 1024)
            let file = try await changeableFile(context, caller)
            if update.permissions != nil { _ = try await access.manageable(file, caller) }
            return try Response.json(try await files.metadata(try await files.update(project: caller.project, id: Self.id(context), update)))
        }
        routes.on(.delete, "files/:file", requires: .writer, action: "Deleting files") { request, context, caller in
            try await changeableFile(context, caller)
            return try Response.json(try await files.metadata(try await files.delete(project: caller.project, id: Self.id(context))))
        }
        routes.on(.put, "files/:file/upload", requires: .writer, action: "Uploading files") { request, context, caller in
            try await changeableFile(context, caller)
            let range = try request.headers[.contentRange].map(ContentRange.init(header:))
            let length = request.headers[.contentLength].flatMap { Int64($0) }
            let (file, offset) = try await files.upload(
                project: caller.project, id: Self.id(context), range: range, contentLength: length, body: request.body)
            var metadata = try await files.metadata(file)
            metadata.uploadOffset = offset
            return try Response.json(metadata, headers: [.uploadOffset: "\(offset)"])
        }
        routes.on(.head, "files/:file/upload", requires: .writer, action: "Uploading files") { request, context, caller in
            let metadata = try await files.metadata(try await changeableFile(context, caller))
            return Response(status: .ok, headers: [
                .uploadOffset: "\(metadata.uploadOffset)", .uploadLength: "\(metadata.size)", .cacheControl: "no-store",
            ])
        }
        routes.on(.post, "files/:file/complete", requires: .writer, action: "Uploading files") { request, context, caller in
            let pending = try await changeableFile(context, caller)
            if let target = pending.attachTo {
                try await access.checkMayWrite(collection: target.collection, id: target.id, setting: [target.field: .string(pending.id)], caller)
            }
            let file = try await files.complete(
                project: caller.project, id: Self.id(context), user: caller.user, schema: try await access.schema(caller))
            return try Response.json(try await files.metadata(file))
        }
        for (path, adding) in [("files/:file/share", true), ("files/:file/unshare", false)] {
            routes.on(.post, RouterPath(stringLiteral: path), requires: .writer, action: "Sharing files") { request, context, caller in
                let body = try await request.decodeBody(FileShareRequest.self, context: context, limit: 256 * 1024)
                _ = try await access.manageable(try await files.file(project: caller.project, id: Self.id(context)), caller)
                let file = try await files.share(project: caller.project, id: Self.id(context), users: body.users, adding: adding)
                return try Response.json(try await files.metadata(file))
            }
        }
        routes.on(.get, "files/:file/content", requires: .reader) { request, context, caller in
            let file = try await readableFile(context, caller)
            return try FileDownload.response(file, request: request, blobs: files.blobs, metrics: files.metrics)
        }
    }

    static func id(_ context: CairnRequestContext) -> String { context.parameters.get("file") ?? "" }

    /// The route's `:file` when the caller may read it (``AccessControl/readable(_:_:)``); `404 not_found` otherwise.
    func readableFile(_ context: CairnRequestContext, _ caller: ProjectAccess) async throws -> StoredFile {
        try await access.readable(try await files.file(project: caller.project, id: Self.id(context)), caller)
    }

    /// The route's `:file` when the caller may change it (``AccessControl/changeable(_:_:)``); `404 not_found` or
    /// `403 forbidden` otherwise.
    @discardableResult
    func changeableFile(_ context: CairnRequestContext, _ caller: ProjectAccess) async throws -> StoredFile {
        try await access.changeable(try await files.file(project: caller.project, id: Self.id(context)), caller)
    }

    /// `?status=&name=&tag=&tag=&limit=&after=`; a bad value is `422 validation_failed` naming it.
    static func query(_ form: FormQuery) throws -> FileQuery {
        var statuses = Set<FileStatus>()
        for text in form.all("status") {
            guard let status = FileStatus(rawValue: text) else {
                throw ErrorBody.validation("status is new, completed or deleted", field: "status")
            }
            statuses.insert(status)
        }
        var limit = 100
        if let text = form.get("limit") {
            guard let value = Int(text), (1...1000).contains(value) else { throw ErrorBody.validation("limit is 1 to 1000", field: "limit") }
            limit = value
        }
        return FileQuery(
            statuses: statuses.isEmpty ? [.new, .completed] : statuses, namePattern: form.get("name"), tags: form.all("tag"),
            after: form.get("after"), limit: limit)
    }
}

/// `GET /v1/public/files/:file`: the bytes of public, completed files, without a token. Mounted at `v1/public`.
struct PublicFileRoutes: RouteGroup {
    let files: FileService

    func add(to routes: RouteCollection<CairnRequestContext>) {
        routes.get("files/:file") { request, context in
            let id = FileRoutes.id(context)
            guard Names.isValidID(id), let file = try await files.storage.file(id: id), file.isPublic, file.status == .completed else {
                throw ErrorBody.notFound("public file \"\(id)\"")
            }
            return try FileDownload.response(file, request: request, blobs: files.blobs, metrics: files.metrics)
        }
    }
}
