import CairnProtocol

extension AccessControl {
    /// Whether the caller may see and download `file`: files follow the records. In a project with read rules, a
    /// member bound by them may read a file only if it is public, the member uploaded it, or the member can read a
    /// live record whose `file` field holds it. A project without read rules lets every member read every file.
    func mayRead(_ file: StoredFile, _ caller: ProjectAccess) async throws -> Bool {
        if caller.role == .admin || file.isPublic || file.createdBy == caller.user { return true }
        let schema = try await schema(caller)
        guard schema.collections.contains(where: { $0.rules?.read != nil }) else { return true }
        for collection in schema.collections {
            let fileFields = collection.fields.filter { $0.type == .file }
            guard !fileFields.isEmpty else { continue }
            let holdsFile = Filter.or(fileFields.map { .condition($0.name, .eq, .string(file.id)) })
            let readable = try await scope(caller, collection).narrowing(holdsFile) ?? holdsFile
            if try await storage.containsLiveRecord(project: caller.project, collection: collection, matching: readable) { return true }
        }
        return false
    }

    /// `file` when the caller may read it (``mayRead(_:_:)``), else `404 not_found`, as for a file that does not exist.
    func readable(_ file: StoredFile, _ caller: ProjectAccess) async throws -> StoredFile {
        guard try await mayRead(file, caller) else { throw ErrorBody.notFound("file \"\(file.id)\"") }
        return file
    }
}
