import CairnProtocol
import Foundation

extension CairnClient {
    /// Opens the local store, checks whose it is, and learns the schema (fetching it when online; working from the
    /// last known schema when offline).
    ///
    /// - Throws: `user_mismatch` when the store belongs to another user and ``CairnConfiguration/userChange`` is
    ///   `.refuse`; `schema_unavailable` when no schema is known and the server cannot be reached.
    public static func open(_ configuration: CairnConfiguration, transport: (any HTTPTransport)? = nil) async throws -> CairnClient {
        guard Names.isValidProjectName(configuration.project) else { throw CairnError.invalid("project \"\(configuration.project)\" is not a valid name") }
        guard configuration.downloadConcurrency >= 1 else {
            throw CairnError.invalid("downloadConcurrency is \(configuration.downloadConcurrency): it must be 1 or more")
        }
        let store: LocalStore
        do {
            store = try LocalStore.open(
                configuration.store, configuration: StoreConfiguration(
                    wallClock: configuration.wallClock, key: configuration.storeKey,
                    combining: QueueCombining(updates: configuration.combineLocalUpdates, deletes: configuration.combineLocalDeletes)))
        } catch {
            throw CairnError.store(error)
        }
        let client = await make(configuration, store: store, transport: transport)
        if store.isReadOnly { return try await openForReading(client, configuration) }

        let owner = try store.meta(.user)
        if let owner, owner != configuration.credentials.user {
            switch configuration.userChange {
            case .refuse:
                throw CairnError(.userMismatch, "This store holds \(owner)'s data; open it with userChange .uploadFirst or .discard to switch users")
            case .uploadFirst(let previous):
                guard previous.user == owner else { throw CairnError.invalid("the previous credentials are not \(owner)'s") }
                var previousConfiguration = configuration
                previousConfiguration.credentials = previous
                let previousClient = await make(previousConfiguration, store: store, transport: transport)
                try await previousClient.push()
                guard !previousClient.hasPendingUpload else {
                    throw CairnError(.userMismatch, "\(owner)'s pending changes could not all be uploaded; nothing was discarded")
                }
                try store.wipe()
            case .discard:
                try store.wipe()
            }
        }
        // Files kept before the store was encrypted are sealed now (once; each in one rename).
        do { try client.fileFolder.sealLeftovers() } catch { throw CairnError.store(error) }
        try store.rememberIdentity(
            user: configuration.credentials.user, server: configuration.serverURL.absoluteString, project: configuration.project,
            device: configuration.device)
        try store.declareLocal(configuration.localCollections)
        do { try store.uploads.noteSchemaVersion(configuration.schemaVersion) } catch { throw CairnError.store(error) }
        try client.applyConfiguredIndexes()
        try DownloadQueryStore(store: store).applyConfiguration(configuration.downloadFilters)

        guard configuration.connectOnOpen else {
            // A store that never synced still opens offline when the app declares local-only collections to work with.
            guard store.schema != nil || !configuration.localCollections.isEmpty else {
                throw CairnError(.schemaUnavailable, "This store has never synced: connect once first")
            }
            await client.refreshCounts()
            await client.loadSyncFacts()
            return client
        }
        do {
            // Signed in once, then the schema and the client's registration at the same time: on a link with a long
            // round trip, opening costs one round trip less.
            _ = try await client.auth.token()
            async let schema = client.engine.refreshSchema()
            async let registration = client.registeredClientID()
            _ = try await schema
            _ = try await registration
        } catch let error as CairnError where error.isRetryable {
            // Offline: work from the last known schema.
            guard store.schema != nil else {
                throw CairnError(
                    .schemaUnavailable, "This store has never synced, so it needs the server once. \(error.message)",
                    details: error.details, isRetryable: true, cause: error)
            }
        }
        await client.refreshCounts()
        await client.loadSyncFacts()
        if configuration.initialDownload == .awaitAtOpen, client.holdsNoData {
            // The app has no client yet to ask for progress: its handler hears each status while the download runs.
            var listener: Task<Void, Never>?
            if let handler = configuration.initialDownloadProgress {
                let updates = await client.statusUpdates()
                listener = Task { for await status in updates { handler(status) } }
            }
            defer { listener?.cancel() }
            do { try await client.pull() } catch {
                try? await client.close()
                throw error
            }
            listener?.cancel()
            configuration.initialDownloadProgress?(await client.status())
        }
        return client
    }

    /// A store that cannot be written opens for reading, offline, as it is: nothing is remembered, migrated or indexed,
    /// and no user switch can clear it.
    private static func openForReading(_ client: CairnClient, _ configuration: CairnConfiguration) async throws -> CairnClient {
        let store = client.store
        if let owner = try store.meta(.user), owner != configuration.credentials.user {
            throw CairnError(.userMismatch, "This read-only store holds \(owner)'s data; it cannot be switched to another user")
        }
        guard store.schema != nil else {
            throw CairnError(.storeReadOnly, "The local store is read-only and has never synced: it holds nothing to read")
        }
        await client.refreshCounts()
        await client.loadSyncFacts()
        return client
    }

    /// True when no collection of the store has completed a first pull: a new store, or one a user switch cleared.
    var holdsNoData: Bool {
        !(store.schema?.collections ?? []).contains { (try? store.pullStates.state($0.name).firstPullDone) ?? false }
    }

    /// The id the server gave this client, registering it first when it has none.
    func registeredClientID() async throws -> String {
        if let id = store.clientID { return id }
        let id = try await api.registerClient(device: configuration.device, app: configuration.app)
        try store.setClientID(id)
        return id
    }

    /// The server, project and user a store file was last opened with, without opening it for sync.
    ///
    /// ```swift
    /// if let identity = try CairnClient.storedIdentity(at: path) { print(identity.user) }
    /// ```
    public static func storedIdentity(at path: String, key: StoreKey? = nil) throws -> (server: URL, project: String, user: String)? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let store: LocalStore
        do { store = try LocalStore.open(.file(path), configuration: StoreConfiguration(key: key)) } catch { throw CairnError.store(error) }
        guard let server = try store.meta(.server).flatMap(URL.init(string:)), let project = try store.meta(.project),
            let user = try store.meta(.user)
        else { return nil }
        return (server, project, user)
    }

    /// The schema number a store file was last opened with (``CairnConfiguration/schemaVersion``), without opening it
    /// for sync; `nil` when none was given.
    public static func storedSchemaVersion(at path: String, key: StoreKey? = nil) throws -> Int? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let store: LocalStore
        do { store = try LocalStore.open(.file(path), configuration: StoreConfiguration(key: key)) } catch { throw CairnError.store(error) }
        return try store.meta(.schemaVersion).flatMap { Int($0) }
    }

    /// `URLSession` on Apple platforms (the system network stack), AsyncHTTPClient elsewhere (faster on Linux).
    static func defaultTransport(_ configuration: CairnConfiguration) -> any HTTPTransport {
        #if canImport(Darwin) || CAIRN_APPLE_EMULATION
        return URLSessionTransport(connectTimeout: configuration.connectTimeout)
        #else
        return AsyncHTTPClientTransport(connectTimeout: configuration.connectTimeout)
        #endif
    }

    private static func make(_ configuration: CairnConfiguration, store: LocalStore, transport: (any HTTPTransport)?) async -> CairnClient {
        let auth = AuthSession(credentials: configuration.credentials, clock: configuration.wallClock)
        let log = SyncLog(configuration)
        var transport = transport ?? defaultTransport(configuration)
        if configuration.traceRequests { transport = TracingTransport(
            inner: transport, logger: log.logger, withData: configuration.traceWithData, format: configuration.traceFormat)
        }
        let api = RemoteAPI(
            baseURL: configuration.serverURL, project: configuration.project, transport: transport,
            auth: auth, retry: configuration.retry, timeout: configuration.requestTimeout, clock: configuration.clock,
            clientID: { store.clientID }, compression: WireCompression(enabled: configuration.compression),
            schemaVersion: configuration.schemaVersion, log: log)
        let client = CairnClient(configuration: configuration, store: store, api: api, auth: auth)
        await auth.bind(signIn: { try await api.login($0) }, refresh: { try await api.refresh($0) })
        return client
    }
}
