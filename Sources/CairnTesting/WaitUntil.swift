/// Waits until `condition` holds, looking again every few milliseconds, with no wall-clock deadline: a busy machine
/// only makes it wait longer. Throws `CancellationError` when the waiting task is cancelled, as a Swift Testing
/// `.timeLimit` trait does to a test that runs too long (the only safety net a test needs).
///
/// ```swift
/// try await waitUntil { await client.status().scheduler.liveConnected }
/// ```
public func waitUntil(
    isolation: isolated (any Actor)? = #isolation, _ condition: () async throws -> Bool
) async throws {
    while try await !condition() {
        try await Task.sleep(for: .milliseconds(5))
    }
}
