import Foundation

/// The `cairn serve` child process of a bench that runs on SQLite or, when given a database, on PostgreSQL.
enum BenchServer {
    /// Starts `cairn serve` for the bench's writer `bench` with `password`: on a new project named `prefix_...` of
    /// the PostgreSQL database at `postgresURL`, or without one on a fresh data directory at `directory` with the
    /// bench project. Returns the server and the project's name.
    static func start(postgresURL: String?, directory: URL, prefix: String, password: String) async throws
        -> (server: ServerProcess, project: String)
    {
        if let postgresURL {
            let project = try await SyncBenchmark.preparePostgres(url: postgresURL, prefix: prefix, password: password)
            return (try ServerProcess(storage: ["--postgres", postgresURL]), project)
        }
        return (try await SyncBenchmark.startServer(in: directory, users: ["bench"], password: password), SyncBenchmark.project)
    }
}
