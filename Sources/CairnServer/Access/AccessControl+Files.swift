import CairnProtocol

extension AccessControl {
    /// Whether the caller may see and download `file`. A private file (``FilePermissions``) is seen by its uploader,
    /// the project's admins and the users it is shared with, and no one else. Other files follow the records: in a
    /// project with read rules, a member bound by them may read a file only if it is public, the member uploaded it,
    /// or the member can read a live record whose `file` field holds it. A project without read rules lets every
    /// member read every file that is not private.
    func mayRead(_ file: StoredFile, _ caller: ProjectAccess) async throws -> Bool {
        try await mayRead(file, caller, schema: try await schema(caller))
    }

    /// ``mayRead(_:_:)`` with the project's schema already read.
    private func mayRead(_ file: StoredFile, _ caller: ProjectAccess, schema: Schema) async throws -> Bool {
        if file.isPrivate { return mayManage(file, caller) || file.permissions.sharedWith.contains(caller.user) }
        if !caller.isBound || file.isPublic || file.createdBy == caller.user { return true }
        guard schema.hasReadRules else { return true }
        return try await someLiveRecord(of: schema, holds: file, caller) { $0.read }
    }

    /// Whether a live record of the project holds `file` in a `file` field and matches what `allowed` picks of the
    /// caller's scope in its collection (`nil`: any record).
    private func someLiveRecord(
        of schema: Schema, holds file: StoredFile, _ caller: ProjectAccess, _ allowed: (RecordScope) -> Filter?
    ) async throws -> Bool {
        for collection in schema.collections.compactMap({ schema.collection(named: $0.name) }) {
            let fileFields = collection.fields.filter { $0.type == .file }
            guard !fileFields.isEmpty else { continue }
            let holdsFile = Filter.or(fileFields.map { .condition($0.name, .eq, .string(file.id)) })
            let matching = try await allowed(scope(caller, collection)).map { Filter.and([holdsFile, $0]) } ?? holdsFile
            if try await storage.containsLiveRecord(project: caller.project, collection: collection, matching: matching) { return true }
        }
        return false
    }

    /// The files among `ids` (of the caller's project) that the caller may not read; none for an unbound caller.
    func hiddenFiles(_ ids: [String], _ caller: ProjectAccess) async throws -> Set<String> {
        guard caller.isBound, !ids.isEmpty else { return [] }
        let schema = try await schema(caller)
        var hidden = Set<String>()
        for id in ids {
            guard let file = try await storage.file(id: id), file.project == caller.project else { continue }
            // Without read rules only private files can be hidden.
            guard schema.hasReadRules || file.isPrivate else { continue }
            if try await !mayRead(file, caller, schema: schema) { hidden.insert(id) }
        }
        return hidden
    }

    /// `file` when the caller may read it (``mayRead(_:_:)``), else `404 not_found`, as for a file that does not exist.
    func readable(_ file: StoredFile, _ caller: ProjectAccess) async throws -> StoredFile {
        guard try await mayRead(file, caller) else { throw ErrorBody.notFound("file \"\(file.id)\"") }
        return file
    }
}

extension AccessControl {
    /// Whether the caller may change `file` (its metadata, its bytes, or delete it). In a project with data rules, a
    /// bound member may change a file it uploaded, or one held by a live record it may write; a project without rules
    /// lets every writer change every file.
    ///
    /// A private file is changed by its uploader and the project's admins only.
    func mayChange(_ file: StoredFile, _ caller: ProjectAccess) async throws -> Bool {
        if !caller.isBound || file.createdBy == caller.user { return true }
        if file.isPrivate { return false }
        let schema = try await schema(caller)
        guard schema.hasRules else { return true }
        return try await someLiveRecord(of: schema, holds: file, caller) { $0.write }
    }

    /// Whether the caller may change who sees `file` (its permissions, whom it is shared with): its uploader and the
    /// project's admins.
    func mayManage(_ file: StoredFile, _ caller: ProjectAccess) -> Bool { !caller.isBound || file.createdBy == caller.user }

    /// `file` when the caller may change its permissions (``mayManage(_:_:)``); `404 not_found` when it may not even
    /// read it, else `403 forbidden`.
    func manageable(_ file: StoredFile, _ caller: ProjectAccess) async throws -> StoredFile {
        guard mayManage(file, caller) else {
            _ = try await readable(file, caller)
            throw ErrorBody.forbidden("Only the uploader of file \"\(file.id)\" and the project's admins change whom it is shared with")
        }
        return file
    }

    /// `file` when the caller may change it; `404 not_found` when it may not even read it, else `403 forbidden`.
    func changeable(_ file: StoredFile, _ caller: ProjectAccess) async throws -> StoredFile {
        guard try await mayChange(file, caller) else {
            _ = try await readable(file, caller)
            throw ErrorBody.forbidden("Your data rules do not let you change file \"\(file.id)\"")
        }
        return file
    }

    /// Checks that the caller may set `fields` of record `id` of `collection` (a file attached to it): the live record
    /// must match the caller's write rule before and after. A record that does not exist yet passes (attaching to it
    /// fails later with `not_found`).
    func checkMayWrite(collection name: String, id: String, setting fields: [String: JSONValue], _ caller: ProjectAccess) async throws {
        guard caller.isBound, let collection = try await schema(caller).collection(named: name),
            let write = try await scope(caller, collection).write
        else { return }
        guard let row = try await storage.liveRow(project: caller.project, collection: collection, id: id) else { return }
        guard case .object(var data) = try JSONValue(parsing: Array(row.dataText.utf8)) else { return }
        let evaluator = try RecordFilterEvaluator.shared()
        let referenced = try await FollowedReference.records(namedBy: data, in: collection, project: caller.project, storage: storage)
        let before = try evaluator.matches(write, collection: collection, id: id, dataText: row.dataText, referenced: referenced)
        for (field, value) in fields { data[field] = value }
        guard before,
            try evaluator.matches(write, collection: collection, id: id, dataText: JSONValue.object(data).jsonText(), referenced: referenced)
        else {
            throw ErrorBody(
                code: .forbidden, message: "Your data rules do not let you attach a file to \(name) \"\(id)\"",
                details: ["collection": .string(name), "id": .string(id)])
        }
    }
}
