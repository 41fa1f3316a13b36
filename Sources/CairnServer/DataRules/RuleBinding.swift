import CairnProtocol
import CairnSQL

/// Puts a user's values in place of a rule's parameters, giving a plain ``Filter`` the database evaluates.
///
/// A condition whose parameter has no value (a missing claim), or a value that does not fit the field (a claim
/// holding an object where the field is a string), matches nothing: it becomes `{"or": []}` (so a `not` around it
/// matches). `in` with a scalar value compares with that one value; a claim's `null`s grant nothing; a claim of more
/// than 1000 values matches nothing.
///
/// ```swift
/// let filter = RuleBinding.bind(rule, collection: jobs, for: RuleSubject(user: "ana", role: .writer))
/// ```
enum RuleBinding {
    /// `rule` with `subject`'s values in place of its parameters.
    static func bind(_ rule: Filter, collection: CollectionSchema, for subject: RuleSubject) -> Filter {
        switch rule {
        case .and(let filters): return .and(filters.map { bind($0, collection: collection, for: subject) })
        case .or(let filters): return .or(filters.map { bind($0, collection: collection, for: subject) })
        case .not(let filter): return .not(bind(filter, collection: collection, for: subject))
        case .condition(let field, let op, let value):
            guard RuleParameter.name(of: value) != nil else { return rule }
            guard let parameter = RuleParameter(value), let bound = subject.value(of: parameter) else { return .matchesNothing }
            return condition(field, op, bound, collection: collection)
        }
    }

    /// The condition with a bound value, or ``Filter/matchesNothing`` when the value does not fit.
    private static func condition(_ field: String, _ op: FilterOperator, _ value: JSONValue, collection: CollectionSchema) -> Filter {
        var condition = Filter.condition(field, op, value)
        if op == .in {
            // A claim's nulls grant nothing (they would match records without the field); a single value is a list of one.
            var values: [JSONValue]
            if case .array(let array) = value { values = array.filter { !$0.isNull } } else { values = [value] }
            guard values.count <= maximumInValues else { return .matchesNothing }
            // Small `in` groups under one `or`, so the SQL stays shallow whatever the claim's length.
            let chunk = 32
            let chunks = stride(from: 0, to: values.count, by: chunk).map {
                Filter.condition(field, .in, .array(Array(values[$0..<min($0 + chunk, values.count)])))
            }
            condition = chunks.count == 1 ? chunks[0] : .or(chunks)
        }
        return fits(condition, collection: collection) ? condition : .matchesNothing
    }

    /// The most values a claim may hold for `in`: a longer claim matches nothing (it would not fit in one statement).
    static var maximumInValues: Int { FilterSQL<SQLiteDialect>.maximumInValues }

    /// Whether the filter compiles against the collection: its values fit their fields' types.
    static func fits(_ filter: Filter, collection: CollectionSchema) -> Bool {
        (try? RecordFilterEvaluator.compile(filter, collection: collection)) != nil
    }
}

extension Filter {
    /// The filter no record matches: `{"or": []}`.
    static let matchesNothing = Filter.or([])
}
