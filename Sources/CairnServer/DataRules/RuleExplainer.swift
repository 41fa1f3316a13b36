import CairnProtocol

/// Works out a ``RuleExplanation``: evaluates every condition and group of a collection's rules, with a user's
/// values bound, on one record, and names the conditions that decide.
struct RuleExplainer {
    let evaluator: RecordFilterEvaluator

    /// The explanation for `subject` (`nil` role: not a member) and the live record `row` (`nil`: none), whose
    /// `reference` fields name the live records `referenced` (JSON text by collection and id).
    func explain(
        collection: CollectionSchema, id: String, row: FeedRow?, subject: RuleSubject?, referenced: [String: [String: String]] = [:]
    ) throws -> RuleExplanation {
        let claims = subject?.claims ?? [:]
        var explanation = RuleExplanation(
            user: subject?.user ?? "", role: subject?.role, claims: claims, collection: collection.name, id: id, version: row?.version,
            read: .init(allowed: false, rule: nil, bound: nil, reason: "", conditions: []),
            write: .init(allowed: false, rule: nil, bound: nil, reason: "", conditions: []))
        let rules = collection.rules
        explanation.read = try verdict("read", rule: rules?.read, collection: collection, id: id, row: row, subject: subject, referenced: referenced)
        explanation.write = try verdict("write", rule: rules?.write, collection: collection, id: id, row: row, subject: subject, referenced: referenced)
        if explanation.write.allowed && !explanation.read.allowed {
            explanation.write.allowed = false
            explanation.write.reason += "; but writing also needs the read rule, which does not match"
        }
        if subject?.role == .reader {
            explanation.write.allowed = false
            explanation.write.reason = "readers never write; " + explanation.write.reason
        }
        return explanation
    }

    private func verdict(
        _ kind: String, rule: Filter?, collection: CollectionSchema, id: String, row: FeedRow?, subject: RuleSubject?,
        referenced: [String: [String: String]]
    ) throws -> RuleExplanation.Verdict {
        guard let subject else {
            return .init(allowed: false, rule: rule, bound: nil, reason: "not a member of the project", conditions: [])
        }
        guard let row else {
            return .init(allowed: false, rule: rule, bound: nil, reason: "there is no live record with this id", conditions: [])
        }
        guard subject.isBound else {
            return .init(allowed: true, rule: rule, bound: nil, reason: "admins are not bound by data rules", conditions: [])
        }
        guard let rule else {
            return .init(allowed: true, rule: nil, bound: nil, reason: "\(collection.name) has no \(kind) rule", conditions: [])
        }
        var nodes: [(path: String, rule: Filter, bound: Filter)] = []
        collect(rule, path: kind, collection: collection, subject: subject, into: &nodes)
        let results = try evaluator.evaluate(nodes.map(\.bound), collection: collection, id: id, dataText: row.dataText, referenced: referenced)
        var decisive = Set<String>()
        mark(rule, path: kind, results: Dictionary(uniqueKeysWithValues: zip(nodes.map(\.path), results)), into: &decisive)
        let allowed = results[0]
        let conditions = zip(nodes, results).compactMap { node, matches -> RuleExplanation.Condition? in
            guard case .condition = node.rule else { return nil }
            return .init(path: node.path, condition: node.rule, bound: node.bound, matches: matches, decides: decisive.contains(node.path))
        }
        let deciding = conditions.filter(\.decides).map { "\(Self.describe($0.condition, bound: $0.bound)) \($0.matches ? "holds" : "does not hold")" }
        let reason = "the \(kind) rule \(allowed ? "matches" : "does not match"): " + deciding.joined(separator: allowed ? " and " : ", nor ")
        return .init(allowed: allowed, rule: rule, bound: nodes[0].bound, reason: reason, conditions: conditions)
    }

    /// Every node of the rule, depth first, with its path and bound form.
    private func collect(
        _ rule: Filter, path: String, collection: CollectionSchema, subject: RuleSubject, into nodes: inout [(path: String, rule: Filter, bound: Filter)]
    ) {
        nodes.append((path, rule, RuleBinding.bind(rule, collection: collection, for: subject)))
        switch rule {
        case .and(let children):
            for (index, child) in children.enumerated() { collect(child, path: "\(path).and[\(index)]", collection: collection, subject: subject, into: &nodes) }
        case .or(let children):
            for (index, child) in children.enumerated() { collect(child, path: "\(path).or[\(index)]", collection: collection, subject: subject, into: &nodes) }
        case .not(let child):
            collect(child, path: "\(path).not", collection: collection, subject: subject, into: &nodes)
        case .condition:
            break
        }
    }

    /// Marks the conditions that decide a node's result: all children of a matching `and` (or a failing `or`), the
    /// first failing child of an `and` (or matching child of an `or`).
    private func mark(_ rule: Filter, path: String, results: [String: Bool], into decisive: inout Set<String>) {
        let result = results[path] ?? false
        switch rule {
        case .and(let children), .or(let children):
            let isAnd = if case .and = rule { true } else { false }
            let paths = children.indices.map { "\(path).\(isAnd ? "and" : "or")[\($0)]" }
            if result == isAnd {
                for (child, childPath) in zip(children, paths) { mark(child, path: childPath, results: results, into: &decisive) }
            } else if let index = paths.firstIndex(where: { results[$0] == !isAnd }) {
                mark(children[index], path: paths[index], results: results, into: &decisive)
            }
        case .not(let child):
            mark(child, path: "\(path).not", results: results, into: &decisive)
        case .condition:
            decisive.insert(path)
        }
    }

    /// `region in claims.regions (["north"])`.
    static func describe(_ condition: Filter, bound: Filter) -> String {
        guard case .condition(let field, let op, let value) = condition else { return "a group" }
        let written = RuleParameter.name(of: value) ?? value.jsonText()
        guard RuleParameter.name(of: value) != nil else { return "\(field) \(op.rawValue) \(written)" }
        if case .condition(_, _, let boundValue) = bound { return "\(field) \(op.rawValue) \(written) (\(boundValue.jsonText()))" }
        return "\(field) \(op.rawValue) \(written) (missing, or of a type that does not fit)"
    }
}
