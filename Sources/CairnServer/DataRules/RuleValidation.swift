import CairnProtocol
import CairnSQL

/// Checks a schema's data rules when it is set: each rule is a filter of the collection's fields whose parameters
/// are known (`user.name`, `user.role`, `claims.NAME`) and fit the fields they are compared with. A problem is
/// `422 validation_failed` naming the place (`jobs.rules.read`) and what is wrong.
///
/// ```swift
/// try RuleValidation.check(schema)
/// ```
enum RuleValidation {
    /// Checks every collection's rules.
    static func check(_ schema: Schema) throws(ErrorBody) {
        for declared in schema.collections {
            guard let rules = declared.rules, let collection = schema.collection(named: declared.name) else { continue }
            for (kind, rule) in [("read", rules.read), ("write", rules.write)] {
                guard let rule else { continue }
                let place = "\(collection.name).rules.\(kind)"
                let sample = try withSampleValues(rule, collection: collection, place: place)
                do {
                    _ = try RecordFilterEvaluator.compile(sample, collection: collection)
                } catch {
                    throw ErrorBody.validation("\(place): \(error.message)", field: place)
                }
            }
        }
    }

    /// The rule with each parameter replaced by a value of the type the user's value will have: text for
    /// `user.name` and `user.role` (so comparing them with a number field fails here), a value fitting the field
    /// for a claim, whose type is only known at sign-in.
    private static func withSampleValues(_ rule: Filter, collection: CollectionSchema, place: String) throws(ErrorBody) -> Filter {
        switch rule {
        case .and(let filters): return .and(try samples(filters, collection: collection, place: place))
        case .or(let filters): return .or(try samples(filters, collection: collection, place: place))
        case .not(let filter): return .not(try withSampleValues(filter, collection: collection, place: place))
        case .condition(let field, let op, let value):
            guard let name = RuleParameter.name(of: value) else { return rule }
            guard let parameter = RuleParameter(value) else {
                throw ErrorBody.validation(
                    "\(place): unknown parameter \"\(name)\" of field \"\(field)\"; use user.name, user.role or claims.NAME", field: place)
            }
            let sample: JSONValue
            switch parameter {
            case .userName, .userRole: sample = .string("sample")
            case .claim:
                let followed = (try? FollowedReference(field, in: collection))??.field
                sample = sampleValue(for: (collection.field(named: field) ?? followed)?.type ?? .string)
            }
            return .condition(field, op, op == .in ? .array([sample]) : sample)
        }
    }

    private static func samples(_ filters: [Filter], collection: CollectionSchema, place: String) throws(ErrorBody) -> [Filter] {
        var checked: [Filter] = []
        for filter in filters { checked.append(try withSampleValues(filter, collection: collection, place: place)) }
        return checked
    }

    /// A value every comparison with a field of `type` accepts.
    private static func sampleValue(for type: FieldType) -> JSONValue {
        switch type {
        case .string, .file, .reference, .json: .string("sample")
        case .integer, .number: .integer(1)
        case .boolean: .bool(true)
        case .datetime: .string("2026-01-01T00:00:00Z")
        }
    }
}
