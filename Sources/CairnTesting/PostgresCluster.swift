import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A throwaway PostgreSQL cluster for tests: made with the machine's `initdb` in a temporary folder, listening on a
/// free loopback port (127.0.0.1 only), with one database, `cairn`, that its user `cairn` reaches without a password.
/// ``stop()`` stops it and removes the folder.
///
/// ```swift
/// guard PostgresCluster.isAvailable(for: "this test") else { return }   // prints the reason and skips
/// let cluster = try PostgresCluster.start()
/// defer { cluster.stop() }
/// let url = cluster.url   // postgres://cairn@127.0.0.1:PORT/cairn
/// ```
///
/// PostgreSQL refuses to run as root; as root, the tools run as the `postgres` user and the folder is theirs.
public final class PostgresCluster: Sendable {
    /// The port the cluster listens on, on 127.0.0.1.
    public let port: Int
    /// The folder holding the cluster's data, socket and log.
    public let folder: URL
    private let binaries: URL

    /// `postgres://cairn@127.0.0.1:PORT/cairn`.
    public var url: String { "postgres://cairn@127.0.0.1:\(port)/cairn" }

    /// The folder of `initdb`, `pg_ctl` and `postgres`: the newest `/usr/lib/postgresql/N/bin`, else one on `PATH`.
    public static let binaries: URL? = {
        let root = URL(fileURLWithPath: "/usr/lib/postgresql")
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []).compactMap(Int.init).sorted()
        for version in versions.reversed() {
            let folder = root.appendingPathComponent("\(version)/bin")
            if FileManager.default.isExecutableFile(atPath: folder.appendingPathComponent("initdb").path) { return folder }
        }
        for entry in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            let folder = URL(fileURLWithPath: String(entry))
            if FileManager.default.isExecutableFile(atPath: folder.appendingPathComponent("initdb").path) { return folder }
        }
        return nil
    }()

    /// Whether a cluster can start here; when it cannot, prints that `what` is skipped and why (tests skip with it).
    ///
    /// ```swift
    /// guard PostgresCluster.isAvailable(for: "the migration test") else { return }
    /// ```
    public static func isAvailable(for what: String) -> Bool {
        guard let reason = unavailableReason else { return true }
        print("skipped: \(what) needs a local PostgreSQL: \(reason)")
        return false
    }

    /// Why a cluster cannot start on this machine, or nil when it can.
    public static var unavailableReason: String? {
        guard binaries != nil else { return "PostgreSQL's initdb and pg_ctl were not found (/usr/lib/postgresql/N/bin or PATH)" }
        if getuid() == 0, getpwnam("postgres") == nil { return "running as root, and there is no postgres user to run PostgreSQL as" }
        return nil
    }

    private init(port: Int, folder: URL, binaries: URL) {
        self.port = port
        self.folder = folder
        self.binaries = binaries
    }

    /// Makes and starts a cluster; throws with PostgreSQL's own output when a step fails.
    public static func start() throws -> PostgresCluster {
        if let reason = unavailableReason { throw ClusterError(reason) }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cairn-pg-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        if getuid() == 0, let account = getpwnam("postgres") {
            guard chown(folder.path, account.pointee.pw_uid, account.pointee.pw_gid) == 0 else {
                throw ClusterError("cannot give \(folder.path) to the postgres user (errno \(errno))")
            }
        }
        let cluster = PostgresCluster(port: try freePort(), folder: folder, binaries: binaries!)
        do {
            let data = folder.appendingPathComponent("data").path
            try cluster.run("initdb", ["-D", data, "-U", "cairn", "-A", "trust", "--no-locale", "-E", "UTF8", "--no-sync"])
            // pg_ctl must be given a wait: an hour, so a machine busy with a whole suite only makes it slower (a start
            // that took over a minute there failed a CI run); a test's time limit is the safety net.
            try cluster.run("pg_ctl", ["-D", data, "-o", cluster.options, "-l", folder.appendingPathComponent("log").path, "-w", "-t", "3600", "start"])
            try cluster.run("createdb", ["-h", "127.0.0.1", "-p", "\(cluster.port)", "-U", "cairn", "cairn"])
        } catch {
            cluster.stop()
            throw error
        }
        return cluster
    }

    /// One cluster for the whole test process: started at the first call, stopped when the process exits.
    public static func shared() throws -> PostgresCluster {
        try sharedCluster.withLock { shared in
            if let shared { return try shared.get() }
            let started = Result { try start() }
            shared = started
            if case .success = started {
                atexit { if case .success(let cluster)? = PostgresCluster.sharedCluster.withLock({ $0 }) { cluster.stop() } }
            }
            return try started.get()
        }
    }

    private static let sharedCluster = Mutex<Result<PostgresCluster, any Error>?>(nil)

    /// Makes a new, empty database and returns its URL (`?sslmode=disable`): one per test keeps tests apart.
    ///
    /// Its default collation is ICU's English one where the server has ICU (PostgreSQL 15 and later), not the
    /// cluster's C: the order real deployments have, which is not byte order, so that tests show Cairn's SQL never
    /// leans on it.
    public func makeDatabase() throws -> String {
        let name = "cairn_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        do {
            try run("createdb", ["-h", "127.0.0.1", "-p", "\(port)", "-U", "cairn", "-T", "template0", "--locale-provider=icu", "--icu-locale=en", name])
        } catch {
            try run("createdb", ["-h", "127.0.0.1", "-p", "\(port)", "-U", "cairn", name])
        }
        return "postgres://cairn@127.0.0.1:\(port)/\(name)?sslmode=disable"
    }

    /// Runs `sql` with `psql` on the database of `url` (one made by ``makeDatabase()``) and returns its unaligned
    /// output: for tests that look at or change what a server stored.
    public func psql(_ sql: String, database url: String) throws -> String {
        let name = String(url.split(separator: "/").last?.split(separator: "?").first ?? "cairn")
        let output = folder.appendingPathComponent("psql-\(UUID().uuidString).out")
        defer { try? FileManager.default.removeItem(at: output) }
        let process = try ChildProcess(
            binaries.appendingPathComponent("psql"),
            arguments: ["-h", "127.0.0.1", "-p", "\(port)", "-U", "cairn", "-d", name, "-At", "-v", "ON_ERROR_STOP=1", "-c", sql],
            environment: ["PATH": "/usr/bin:/bin", "LC_ALL": "C"], output: .file(output), errors: .standardOutput)
        let status = process.waitUntilExit()
        let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        guard status == 0 else { throw ClusterError("psql exited with \(status): \(text)") }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The server's options: its port and socket folder, loopback only, and room for many connections (a full server
    /// suite on PostgreSQL runs every test at once, each on a database of its own with its server's pool: 535
    /// connections at its peak on a 2-core machine; PostgreSQL's default of 100, or 400, made leases wait past their
    /// timeout there).
    private var options: String {
        "-p \(port) -k \(folder.path) -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=1000"
    }

    /// Restarts the database server as an operator would (`pg_ctl restart -m fast`): every connection is cut, and the
    /// same data comes back on the same port.
    public func restart() throws {
        let data = folder.appendingPathComponent("data").path
        try run("pg_ctl", ["-D", data, "-o", options, "-l", folder.appendingPathComponent("log").path, "-m", "fast", "-w", "-t", "3600", "restart"])
    }

    /// Stops the cluster at once and removes its folder.
    public func stop() {
        _ = try? run("pg_ctl", ["-D", folder.appendingPathComponent("data").path, "-m", "immediate", "-w", "stop"])
        try? FileManager.default.removeItem(at: folder)
    }

    /// Runs one of PostgreSQL's tools, as the postgres user when this process is root.
    private func run(_ tool: String, _ arguments: [String]) throws {
        let program = binaries.appendingPathComponent(tool)
        let log = folder.appendingPathComponent("\(tool).out")
        var environment = ["PATH": "/usr/bin:/bin", "LC_ALL": "C"]
        environment["TMPDIR"] = folder.path
        let process: ChildProcess
        if getuid() == 0 {
            process = try ChildProcess(
                URL(fileURLWithPath: "/usr/sbin/runuser"), arguments: ["-u", "postgres", "--", program.path] + arguments, environment: environment,
                output: .file(log), errors: .standardOutput)
        } else {
            process = try ChildProcess(program, arguments: arguments, environment: environment, output: .file(log), errors: .standardOutput)
        }
        let status = process.waitUntilExit()
        guard status == 0 else {
            let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            throw ClusterError("\(tool) exited with \(status): \(output)")
        }
    }

    /// A port nothing listens on now: the kernel's pick for a socket bound to port 0.
    private static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw ClusterError("cannot open a socket (errno \(errno))") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw -> Bool in
                bind(descriptor, raw, length) == 0 && getsockname(descriptor, raw, &length) == 0
            }
        }
        guard bound else { throw ClusterError("cannot find a free port (errno \(errno))") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// A step of making or starting the cluster failed.
    public struct ClusterError: Error, CustomStringConvertible {
        /// What failed, with PostgreSQL's output.
        public let description: String
        /// An error saying `description`.
        public init(_ description: String) { self.description = description }
    }
}
