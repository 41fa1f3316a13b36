import CairnProtocol

/// An audit of the operations a project remembers, on any backend, read through
/// ``ServerStorage/exportRows(of:after:limit:)``: what the tests and `cairn bench chaos` check after faults and kills.
///
/// ```swift
/// let counts = try await server.storage.operationCounts(project: "field")
/// #expect(counts.head == Int64(counts.applied))   // creates only: none was applied twice
/// ```
extension ServerStorage {
    /// The project's head version and how many remembered operations were applied with a new version. With creates
    /// and updates only, the two are equal exactly when no operation was applied twice.
    public func operationCounts(project: String) async throws -> (head: Int64, applied: Int) {
        let projects = try await exportRows(of: .projects, after: nil, limit: Int.max)
        let head = projects.first { $0.first == .text(project) }.flatMap { row -> Int64? in
            guard let index = StorageTable.projects.index(of: "head_version"), case .integer(let value) = row[index] else { return nil }
            return value
        } ?? 0
        var applied = 0
        try await forEachOperation(of: project) { _, status in if status == .applied { applied += 1 } }
        return (head, applied)
    }

    /// How the server answered the operation `opId`, while it remembers it; `nil` if it never saw it.
    public func operationStatus(project: String, opId: String) async throws -> OperationStatus? {
        var found: OperationStatus?
        try await forEachOperation(of: project) { id, status in if id == opId { found = status } }
        return found
    }

    /// Calls `body` with the id and status of each operation the project remembers.
    private func forEachOperation(of project: String, _ body: (String, OperationStatus?) -> Void) async throws {
        let table = StorageTable.operations
        guard let resultIndex = table.index(of: "result") else { return }
        var after: StorageRow = [.text(project), .text("")]
        while true {
            let rows = try await exportRows(of: table, after: after, limit: 1000)
            for row in rows {
                guard row[0] == .text(project) else { return }
                guard case .text(let id) = row[1], case .text(let result) = row[resultIndex] else { continue }
                body(id, (try? JSONValue(parsing: result))?["status"]?.stringValue.flatMap(OperationStatus.init(rawValue:)))
            }
            guard let last = rows.last else { return }
            after = table.key(of: last)
        }
    }
}
