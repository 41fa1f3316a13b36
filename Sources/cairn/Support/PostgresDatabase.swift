import Foundation

/// The PostgreSQL database a command names: its `--postgres` flag, else `CAIRN_POSTGRES_URL` (empty counts as unset).
enum PostgresDatabase {
    static func url(_ flag: String?, environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if let flag { return flag }
        guard let text = environment["CAIRN_POSTGRES_URL"], !text.isEmpty else { return nil }
        return text
    }
}
