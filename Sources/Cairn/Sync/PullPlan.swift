import CairnProtocol
import Foundation

/// One collection a pull downloads.
struct PullTarget: Sendable, Hashable {
    var collection: String
    /// The download queries of a partial collection to pull; `nil` for all of them (or its feed).
    var queries: Set<String>?
    /// Its download phase (1 or more), `nil` for none: targets of one phase may pull at once
    /// (``CairnConfiguration/downloadConcurrency``), never beside another phase's.
    var phase: Int? = nil
}

extension SyncScope {
    /// A pull of `targets`, in their order.
    init(pulling targets: [PullTarget]) {
        let only = targets.compactMap { target in target.queries.map { (target.collection, $0) } }
        self.init(
            push: false, pull: true, collections: targets.map(\.collection), onlyQueries: Dictionary(only, uniquingKeysWith: { $0.union($1) }))
    }
}

/// The order and the members of pulls, from ``CairnConfiguration/downloadPhases`` and
/// ``CairnConfiguration/downloadGroups``: the one place where phases and group members are read.
///
/// A collection's phase is the lowest phase of 1 or more that a download phase list or a group gives it (directly or
/// through one of its download queries); collections with a phase are pulled first, by phase, the others after them
/// in schema order. Automatic downloads leave out the collections and queries that only groups of phase 0 or below
/// name.
struct PullPlan: Sendable {
    /// The server's collections, in schema order.
    let collections: [String]
    /// The download queries, by name: their collection.
    let queries: [String: String]
    let groups: [String: DownloadGroup]
    let phases: [[String]]

    init(configuration: CairnConfiguration, collections: [String], queries: [String: String]) {
        self.collections = collections
        self.queries = queries
        self.groups = configuration.downloadGroups
        self.phases = configuration.downloadPhases
    }

    /// The plan for `store`'s collections and download queries now.
    init(configuration: CairnConfiguration, store: LocalStore) throws {
        let states = try DownloadQueryStore(store: store).states(collection: nil)
        self.init(
            configuration: configuration, collections: store.schema?.collections.map(\.name) ?? [],
            queries: Dictionary(states.map { ($0.name, $0.collection) }, uniquingKeysWith: { first, _ in first }))
    }

    /// What a member name is: a download query (of its collection) or a collection.
    /// - Throws: `invalid_argument` for a name that is both, or neither.
    func resolve(_ name: String) throws -> (collection: String, query: String?) {
        let query = queries[name]
        let isCollection = collections.contains(name)
        if query != nil, isCollection {
            throw CairnError.invalid("\(name) names both a download query and a collection: rename the query to tell them apart")
        }
        if let query { return (query, name) }
        guard isCollection else { throw CairnError.invalid("no collection or download query is named \(name)") }
        return (name, nil)
    }

    /// `members` with every name of another group replaced by that group's members, depth first (SAP's nested
    /// download groups). A group reached again through its own members is refused (`invalid_argument`), as is a
    /// name that is both a group and a collection or download query.
    func expanded(_ members: [String], path: [String] = []) throws -> [String] {
        var names: [String] = []
        for name in members {
            guard let inner = groups[name] else {
                names.append(name)
                continue
            }
            if queries[name] != nil || collections.contains(name) {
                throw CairnError.invalid("\(name) names both a download group and a collection or download query: rename the group")
            }
            if path.contains(name) {
                throw CairnError.invalid("the download group \(name) contains itself: \((path + [name]).joined(separator: " → "))")
            }
            names += try expanded(inner.members, path: path + [name])
        }
        return names
    }

    /// The collections every phase list and group give a phase, with the lowest; a collection named by a group of
    /// phase 0 or below gets `0` unless a phase of 1 or more is given to it too. Unknown names are skipped.
    private func phasesByCollection() throws -> (phase: [String: Int], order: [String]) {
        var phase: [String: Int] = [:]
        var order: [String] = []
        func give(_ value: Int, to collection: String) {
            if !order.contains(collection) { order.append(collection) }
            let current = phase[collection]
            if current == nil || (value > 0 && (current! <= 0 || value < current!)) { phase[collection] = value }
        }
        for (index, list) in phases.enumerated() {
            for name in list where collections.contains(name) { give(index + 1, to: name) }
        }
        for (key, group) in groups.sorted(by: { ($0.value.phase ?? .max, $0.key) < ($1.value.phase ?? .max, $1.key) }) {
            guard let value = group.phase else { continue }
            for name in try expanded(group.members, path: [key]) where queries[name] != nil || collections.contains(name) {
                let (collection, query) = try resolve(name)
                // A query left out of automatic downloads does not leave out its whole collection.
                if query != nil, value <= 0 { continue }
                give(value, to: collection)
            }
        }
        return (phase, order)
    }

    /// Automatic downloads: every collection by phase, the others after them, without what only groups of phase 0
    /// or below name.
    func automatic() throws -> [PullTarget] {
        let (phase, order) = try phasesByCollection()
        let phased = order.filter { phase[$0]! > 0 }.enumerated().sorted { (phase[$0.element]!, $0.offset) < (phase[$1.element]!, $1.offset) }
        let names = phased.map(\.element) + collections.filter { phase[$0] == nil }
        let skipped = try manualQueries()
        return names.compactMap { name in
            let left = skipped.filter { queries[$0] == name }
            let given = phase[name].flatMap { $0 > 0 ? $0 : nil }
            guard !left.isEmpty else { return PullTarget(collection: name, queries: nil, phase: given) }
            let pulled = Set(queries.filter { $0.value == name && !left.contains($0.key) }.keys)
            return pulled.isEmpty ? nil : PullTarget(collection: name, queries: pulled, phase: given)
        }
    }

    /// The download queries that only groups of phase 0 or below name (and not their whole collection).
    private func manualQueries() throws -> Set<String> {
        var manual = Set<String>()
        var automatic = Set<String>()
        for (key, group) in groups {
            for name in try expanded(group.members, path: [key]) where queries[name] != nil {
                guard try resolve(name).query != nil else { continue }
                if let phase = group.phase, phase <= 0 { manual.insert(name) } else { automatic.insert(name) }
            }
        }
        return manual.subtracting(automatic)
    }

    /// The members of `group`, in phase order (members without a phase in the group's order, after them), a
    /// collection's queries together.
    func members(of group: String) throws -> [PullTarget] {
        guard let members = groups[group]?.members else { throw CairnError.invalid("no download group is named \(group)") }
        let (phase, _) = try phasesByCollection()
        var targets: [PullTarget] = []
        for name in try expanded(members, path: [group]) {
            let (collection, query) = try resolve(name)
            if let index = targets.firstIndex(where: { $0.collection == collection }) {
                if let query, targets[index].queries != nil { targets[index].queries!.insert(query) } else if query == nil { targets[index].queries = nil }
            } else {
                targets.append(PullTarget(collection: collection, queries: query.map { [$0] }))
            }
        }
        for index in targets.indices { targets[index].phase = phase[targets[index].collection].flatMap { $0 > 0 ? $0 : nil } }
        let rank = { (target: PullTarget) -> Int in target.phase ?? .max }
        return targets.enumerated().sorted { (rank($0.element), $0.offset) < (rank($1.element), $1.offset) }.map(\.element)
    }
}
