import Cairn
import CairnProtocol
import Foundation

extension Fixture {
    /// A client of the fixture's project signed in as `user`, on a network it can switch off (`network: nil` uses
    /// the SDK's default transport, for real network cuts; ``URLSessionTransport`` with `CAIRN_TEST_TRANSPORT=urlsession`).
    public func client(
        _ user: String, store: StoreLocation = .inMemory, network: SwitchableTransport? = SwitchableTransport(),
        configure: (inout CairnConfiguration) -> Void = { _ in }
    ) async throws -> CairnClient {
        var configuration = CairnConfiguration(
            serverURL: server.baseURL, project: Fixture.project, device: "test-\(user)",
            credentials: .password(user: user, password: TestServer.password), store: store)
        configuration.retry = RetryPolicy(initialDelay: .milliseconds(5), maximumDelay: .milliseconds(50), maximumAttempts: 3)
        if let key = Fixture.encryptedStoreKey {
            // The whole client suite again on encrypted stores: stores in memory become encrypted files.
            if store == .inMemory { configuration.store = .file(Fixture.temporaryStorePath()) }
            configuration.storeKey = key
        }
        configure(&configuration)
        return try await CairnClient.open(configuration, transport: network ?? TestTransport.defaultTransport(connectTimeout: configuration.connectTimeout))
    }

    /// The key every fixture client's store is encrypted with when the environment sets
    /// `CAIRN_TEST_ENCRYPTED_STORES=1` (then stores asked for in memory are encrypted files), else nil.
    public static let encryptedStoreKey: StoreKey? =
        ProcessInfo.processInfo.environment["CAIRN_TEST_ENCRYPTED_STORES"] == "1" ? try? StoreKey.raw(Data(repeating: 0x5a, count: 32)) : nil

    /// A path for a store file in a new temporary directory.
    public static func temporaryStorePath() -> String {
        let directory = TestScratch.url("cairn-store")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory.appendingPathComponent("store.sqlite").path
    }
}
