/// Carries live notices between server instances that share one storage, so that a write on one instance wakes
/// the event streams of all of them (see ``ServerStorage/noticeChannel``). Notices carry no data, so a notice lost
/// while a channel reconnects costs a client a wake-up, never a change.
public protocol NoticeChannel: Sendable {
    /// Sends a project's changed collections (with their new versions) to the other instances.
    func broadcast(project: String, changes: [String: Int64]) async throws
    /// Hands every notice another instance broadcasts to `deliver`, until the task is cancelled.
    func receive(_ deliver: @escaping @Sendable (_ project: String, _ changes: [String: Int64]) async -> Void) async throws
}
