import CairnProtocol
import Hummingbird

extension AccessControl {
    /// The project's schema, or `404 not_found`.
    func schema(_ access: ProjectAccess) async throws -> Schema {
        guard let schema = try await storage.schema(project: access.project) else { throw ErrorBody.notFound("project \"\(access.project)\"") }
        return schema
    }

    /// The project's schema and the route's `:collection` within it, or `404 not_found`.
    func collection(_ access: ProjectAccess, _ context: CairnRequestContext) async throws -> (Schema, CollectionSchema) {
        let name = context.parameters.get("collection") ?? ""
        let schema = try await schema(access)
        guard let collection = schema.collection(named: name) else { throw ErrorBody.notFound("collection \"\(name)\"") }
        return (schema, collection)
    }

    /// The user data rules are evaluated for: the caller, its role and its claims (``claims(of:)``).
    func subject(_ access: ProjectAccess) async throws -> RuleSubject {
        RuleSubject(user: access.user, role: access.role, claims: try await claims(of: access))
    }

    /// What the caller may read and write in `collection` (``RecordScope``).
    func scope(_ access: ProjectAccess, _ collection: CollectionSchema) async throws -> RecordScope {
        guard access.isBound, collection.rules != nil else { return RecordScope(read: nil, write: nil) }
        return RecordScope(collection: collection, subject: try await subject(access))
    }

    /// The read filters that bind the caller in `collections`, by collection (none for an unbound caller): which
    /// records it may name in a `reference` field.
    func readFilters(_ access: ProjectAccess, schema: Schema, collections: Set<String>) async throws -> [String: Filter] {
        guard access.isBound, !collections.isEmpty else { return [:] }
        let bound = collections.sorted().compactMap(schema.collection(named:)).filter { $0.rules?.read != nil }
        guard !bound.isEmpty else { return [:] }
        let subject = try await subject(access)
        var filters: [String: Filter] = [:]
        for collection in bound { filters[collection.name] = RecordScope(collection: collection, subject: subject).read }
        return filters
    }

    /// The write rules binding the caller in `collections`; `nil` when none does.
    func writeGuard(_ access: ProjectAccess, schema: Schema, collections: Set<String>) async throws -> WriteGuard? {
        guard access.isBound else { return nil }
        let bound = collections.sorted().compactMap(schema.collection(named:)).filter { $0.rules != nil }
        guard !bound.isEmpty else { return nil }
        let subject = try await subject(access)
        var filters: [String: Filter] = [:]
        var readFilters: [String: Filter] = [:]
        for collection in bound {
            let scope = RecordScope(collection: collection, subject: subject)
            if let write = scope.write { filters[collection.name] = write }
            if let read = scope.read { readFilters[collection.name] = read }
        }
        return filters.isEmpty ? nil : try WriteGuard(filters: filters, readFilters: readFilters, schema: schema)
    }
}
