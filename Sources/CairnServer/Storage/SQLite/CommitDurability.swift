/// When the server's SQLite database counts a commit as done, and so what an acknowledged write survives.
///
/// ```swift
/// var configuration = ServerConfiguration(dataDirectory: data)
/// configuration.durability = .normal   // faster pushes; a power cut may lose the last acknowledged writes
/// ```
public enum CommitDurability: String, Sendable, CaseIterable {
    /// Every commit waits until its WAL frames are on disk (`synchronous = FULL`): an acknowledged write survives a
    /// crash of the server and a power cut. The default: clients forget what the server acknowledged.
    case full
    /// Commits wait for the operating system, not the disk; the WAL is flushed at checkpoints
    /// (`synchronous = NORMAL`). An acknowledged write survives a crash of the server process, but a power cut or
    /// kernel crash may lose the last ones, which their clients will not send again. About 10% faster pushes.
    case normal
}
