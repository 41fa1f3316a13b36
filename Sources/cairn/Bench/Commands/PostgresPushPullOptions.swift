import ArgumentParser

/// The options of the benches that push records into a PostgreSQL database in raw batches and pull them back in
/// pages (`cairn bench backends`, `cairn bench tables`), checked once.
struct PostgresPushPullOptions: ParsableArguments {
    @Option(name: .long, help: "The PostgreSQL database to fill (postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE), or CAIRN_POSTGRES_URL.")
    var postgres: String?

    @Option(name: .long, help: "Records pushed and pulled per round and side.")
    var records: Int = 50_000

    @Option(name: .long, help: "Operations per batch.")
    var batch: Int = 1000

    @Option(name: .long, help: "Records per pulled page.")
    var page: Int = 5000

    @Option(name: .long, help: "Rounds (the medians are reported).")
    var rounds: Int = 3

    /// The database's URL (checked by ``validate()``).
    var url: String { PostgresDatabase.url(postgres) ?? "" }

    func validate() throws {
        guard records > 0, rounds > 0 else { throw ValidationError("--records and --rounds must be positive") }
        guard (1...1000).contains(batch), (1...10000).contains(page) else { throw ValidationError("--batch is 1 to 1000, --page 1 to 10000") }
        guard PostgresDatabase.url(postgres) != nil else {
            throw ValidationError("--postgres URL (or CAIRN_POSTGRES_URL) names the database to measure")
        }
    }
}
