import CairnProtocol

/// A project's numbered schemas as stored, with what the sync layer derives from them: the data steps between two
/// numbers, the steps whose migration of stored records is not done, and translators for app builds.
struct SchemaHistory: Sendable {
    /// The project's current schema.
    let current: Schema
    /// Every stored version, by number.
    let versions: [StoredSchemaVersion]

    /// The schema numbered `number`, if kept.
    func schema(number: Int) -> Schema? { versions.first { $0.schema.number == number }?.schema }

    /// The data steps of the versions after `number` up to the current one, in order.
    func steps(after number: Int) -> [DataStep] {
        var steps: [DataStep] = []
        for (index, version) in versions.enumerated() where index > 0 && version.schema.number > number && version.schema.number <= current.number {
            steps += DataStep.resolve(version.schema.migrations, from: versions[index - 1].schema)
        }
        return steps
    }

    /// The data steps of versions whose migration of stored records has not finished: stored records may still be in
    /// the shape before them, so every read and write brings them to the current shape first (the steps are
    /// idempotent).
    var pendingSteps: [DataStep] {
        guard let first = versions.firstIndex(where: \.migration.isUnfinished) else { return [] }
        return steps(after: versions[first].schema.number - 1)
    }

    /// The translator for records of an app build made for schema `number` (`nil`: the current one). A number below
    /// the project's ``Schema/minimumSchemaVersion`` is `426 upgrade_required` when `enforcingWindow`.
    func translator(for number: Int?, enforcingWindow: Bool = true) throws(ErrorBody) -> SchemaTranslator {
        let pending = pendingSteps
        guard let number, number < current.number else {
            return SchemaTranslator(number: current.number, current: current, client: current, forward: [], pending: pending)
        }
        if enforcingWindow, let minimum = current.minimumSchemaVersion, number < minimum {
            throw ErrorBody(
                code: .upgradeRequired,
                message: "This app build was made for schema version \(number); the server serves versions \(minimum) and later: update the app (its queued changes are kept and sent after the update)",
                details: ["minimumSchemaVersion": .integer(Int64(minimum)), "schemaVersion": .integer(Int64(number))])
        }
        return SchemaTranslator(number: number, current: current, client: schema(number: number), forward: steps(after: number), pending: pending)
    }
}
