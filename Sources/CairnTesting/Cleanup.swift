/// Runs `body`, then `cleanup`, which is awaited before this returns or rethrows: the scope of what a test started
/// (a server, a proxy, a client, an event stream), so that nothing it made outlives it. What `defer` would do if it
/// could await; a `defer { Task { ... } }` instead leaves the work to a task the test process may end before.
///
/// ```swift
/// let fixture = try await Fixture.start()
/// try await withCleanup({ await fixture.stop() }) {
///     _ = try await fixture.push("alice", operations)
/// }
/// ```
public func withCleanup<T>(
    isolation: isolated (any Actor)? = #isolation, _ cleanup: () async -> Void, _ body: () async throws -> T
) async throws -> T {
    do {
        let result = try await body()
        await cleanup()
        return result
    } catch {
        await cleanup()
        throw error
    }
}
