import CairnProtocol
import CairnSQL

/// What a backend supplies for the statements over `records` written once above the dialects (``FeedStatement``):
/// its placeholders and its compiled filters (each backend reads JSON fields, and record ids, its own way).
protocol RecordsDialect: Sendable {
    /// The placeholder of the statement's argument at `position` (1-based).
    func placeholder(_ position: Int) -> String
    /// `filter` compiled over the JSON text in column `document` of `records`, its placeholders numbered from
    /// `firstPlaceholder`; a record's own `data` is read through `rule_data` first for the fields data rules compare.
    /// Fields of referenced records are read as they are now, or as of the version `asOf` (``FollowedReference``).
    func compile(_ filter: Filter, collection: CollectionSchema, document: String, asOf: String?, firstPlaceholder: Int) throws(ErrorBody) -> CompiledFilter
    /// An expression that is always true.
    var alwaysTrue: String { get }
}

/// A statement under construction: its text is written in order, and each argument takes the next placeholder.
struct RecordsStatementBuilder<Dialect: RecordsDialect> {
    let dialect: Dialect
    let collection: CollectionSchema
    /// The arguments bound so far, in placeholder order.
    private(set) var arguments: [SQLArgument] = []

    init(_ dialect: Dialect, collection: CollectionSchema) {
        self.dialect = dialect
        self.collection = collection
    }

    /// Binds `argument`; returns its placeholder.
    mutating func bind(_ argument: SQLArgument) -> String {
        arguments.append(argument)
        return dialect.placeholder(arguments.count)
    }

    /// `filter` over `document`, its arguments bound; always true without one. `asOf`: see ``RecordsDialect``.
    mutating func filter(_ filter: Filter?, document: String, asOf: String? = nil) throws(ErrorBody) -> String {
        guard let filter else { return dialect.alwaysTrue }
        let compiled = try dialect.compile(filter, collection: collection, document: document, asOf: asOf, firstPlaceholder: arguments.count + 1)
        arguments += compiled.arguments
        return compiled.sql
    }
}
