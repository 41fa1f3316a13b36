import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A process started with `posix_spawn`, for tests that run programs: the built `cairn`, PostgreSQL's tools.
///
/// Foundation's `Process.run()` on Linux lists `/proc/self/fd` to close the parent's descriptors in the child, and
/// copies 256 bytes from each directory entry whatever the name's length. With the whole suite running (about
/// 1,700 descriptors open: servers' databases and sockets) the last entry can sit at the end of readable memory,
/// and the copy crashed the test process. This launcher asks the C library to close every inherited descriptor
/// instead (`posix_spawn_file_actions_addclosefrom_np`), so it never lists them.
public final class ChildProcess: @unchecked Sendable {
    /// Where one of the child's output streams goes.
    public enum Destination {
        /// `/dev/null`.
        case discard
        /// A pipe this process reads: ``standardOutput`` or ``standardError``.
        case pipe
        /// A file, created or truncated.
        case file(URL)
        /// The same place as the child's standard output (for standard error only).
        case standardOutput
    }

    /// The child's process id.
    public let pid: pid_t
    /// The read end of the child's standard output, when it goes to a ``Destination/pipe``.
    public let standardOutput: FileHandle?
    /// The read end of the child's standard error, when it goes to a ``Destination/pipe``.
    public let standardError: FileHandle?

    private let lock = NSLock()
    private var exitStatus: Int32?

    /// Starts `executable` with exactly `environment`; standard input is `/dev/null`.
    public init(_ executable: URL, arguments: [String], environment: [String: String],
         output: Destination = .discard, errors: Destination = .discard) throws {
        // Darwin spells the type as an optional pointer, Glibc as a struct.
        #if canImport(Darwin)
        var actions: posix_spawn_file_actions_t? = nil
        #else
        var actions = posix_spawn_file_actions_t()
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var parentEnds: [Int32] = []
        var childEnds: [Int32] = []
        defer { childEnds.forEach { close($0) } }

        func route(_ destination: Destination, to target: Int32) throws -> FileHandle? {
            switch destination {
            case .discard:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", O_WRONLY, 0)
            case .file(let url):
                posix_spawn_file_actions_addopen(&actions, target, url.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            case .standardOutput:
                posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, target)
            case .pipe:
                var ends: [Int32] = [0, 0]
                guard pipe(&ends) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
                _ = fcntl(ends[0], F_SETFD, FD_CLOEXEC)
                parentEnds.append(ends[0])
                childEnds.append(ends[1])
                posix_spawn_file_actions_adddup2(&actions, ends[1], target)
                return FileHandle(fileDescriptor: ends[0], closeOnDealloc: true)
            }
            return nil
        }

        posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
        let out = try route(output, to: STDOUT_FILENO)
        let err = try route(errors, to: STDERR_FILENO)
        #if canImport(Darwin)
        // Apple platforms close descriptors 3 and up in the child with a spawn flag.
        var attributes: posix_spawnattr_t? = nil
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_CLOEXEC_DEFAULT))
        #else
        try Self.closeInheritedDescriptors(&actions)
        #endif

        let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid = pid_t()
        #if canImport(Darwin)
        let failure = posix_spawn(&pid, executable.path, &actions, &attributes, argv, envp)
        #else
        let failure = posix_spawn(&pid, executable.path, &actions, nil, argv, envp)
        #endif
        guard failure == 0 else {
            parentEnds.forEach { close($0) }
            throw POSIXError(POSIXErrorCode(rawValue: failure) ?? .EIO)
        }
        self.pid = pid
        standardOutput = out
        standardError = err
    }

    #if !canImport(Darwin)
    /// Closes descriptors 3 and up in the child, as `POSIX_SPAWN_CLOEXEC_DEFAULT` does on Apple platforms: a child
    /// that kept a copy of a test's socket or pipe would hold it open after the test closed it.
    private static func closeInheritedDescriptors(_ actions: inout posix_spawn_file_actions_t) throws {
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else {
            throw POSIXError(.ENOSYS)  // glibc before 2.34
        }
        let closeFrom = unsafeBitCast(symbol, to: CloseFrom.self)
        let failure = closeFrom(&actions, 3)
        guard failure == 0 else { throw POSIXError(POSIXErrorCode(rawValue: failure) ?? .EIO) }
    }
    #endif

    /// Sends `signal` (SIGINT, SIGTERM, SIGKILL) unless the child has already been reaped.
    public func send(_ signal: Int32) {
        lock.lock()
        defer { lock.unlock() }
        if exitStatus == nil { kill(pid, signal) }
    }

    /// Whether the child has not exited yet.
    public var isRunning: Bool { reap() == nil }

    /// Waits for the child to exit, without holding a thread in `waitpid`, and returns ``terminationStatus``.
    @discardableResult
    public func waitUntilExit() -> Int32 {
        while true {
            if let status = reap() { return status }
            usleep(5_000)
        }
    }

    /// Waits for the child to exit off the current thread's time: for async tests.
    @discardableResult
    public func exit() async -> Int32 {
        while true {
            if let status = reap() { return status }
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    /// The exit code, or the signal's number when a signal ended the child (as Foundation's `Process` reports it).
    public var terminationStatus: Int32 { waitUntilExit() }

    private func reap() -> Int32? {
        lock.lock()
        defer { lock.unlock() }
        if let exitStatus { return exitStatus }
        var status: Int32 = 0
        let result = waitpid(pid, &status, WNOHANG)
        if result == 0 || (result == -1 && errno == EINTR) { return nil }
        if result == -1 {
            exitStatus = -1  // not our child any more: nothing left to wait for
        } else if status & 0x7f == 0 {
            exitStatus = (status >> 8) & 0xff
        } else {
            exitStatus = status & 0x7f
        }
        return exitStatus
    }
}
