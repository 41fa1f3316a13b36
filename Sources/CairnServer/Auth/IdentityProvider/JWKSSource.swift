import AsyncHTTPClient
import CairnProtocol
import Foundation
import JWTKit
import NIOCore

/// Where the identity provider's keys come from. A file is read once, when the server starts. A URL is fetched
/// when first needed, kept for its `Cache-Control: max-age` (bounded to 1 minute...1 day; 10 minutes without one),
/// and fetched again when a token names a `kid` it lacks, at most once per
/// ``IdentityProviderConfiguration/minimumRefetchInterval``; a failed fetch keeps the keys it had.
actor JWKSSource {
    private let url: URL?
    private let configuration: IdentityProviderConfiguration
    private let clock: any WallClock
    private var keys: JWKSKeys
    /// What verifies with ``keys``, made when first needed after they change.
    private var collection: JWTKeyCollection?
    /// Counts the changes of ``keys``, so a collection made from older keys is not kept.
    private var generation = 0
    /// When a URL's keys are stale and fetched again before use.
    private var expiresAt = Date.distantPast
    /// When a URL was last fetched (for the rate limit of fetches on an unknown `kid`).
    private var lastFetch: Date?
    /// The last fetch's failure, told to callers who find no key.
    private var lastFailure: String?
    /// The fetch under way, which concurrent callers share.
    private var fetching: Task<Void, Never>?

    /// The source `configuration` names; a file's keys are read now (throws when they cannot be used).
    init(configuration: IdentityProviderConfiguration, clock: any WallClock) throws {
        self.configuration = configuration
        self.clock = clock
        self.url = configuration.jwksURL
        if url == nil {
            let path = configuration.jwksFilePath
            guard let data = FileManager.default.contents(atPath: path) else { throw JWKSError("cannot read the JWKS file \(path)") }
            do {
                self.keys = try JWKSKeys.parse(data)
            } catch let error as JWKSError {
                throw JWKSError("the JWKS file \(path) cannot be used: \(error.description)")
            }
        } else {
            self.keys = .empty
        }
    }

    /// The algorithm of the key `kid` and what verifies with it, fetched first when the keys are stale or lack
    /// `kid` (and the rate limit allows); `nil` when no key has that `kid`.
    func key(_ kid: String) async -> (algorithm: String, collection: JWTKeyCollection)? {
        if url != nil {
            let now = clock.now()
            let stale = now >= expiresAt
            let unknown = keys.algorithm(of: kid) == nil && lastFetch.map { now.timeIntervalSince($0) >= configuration.minimumRefetchInterval } ?? true
            if stale || unknown { await fetch() }
        }
        let current = keys, generation = self.generation
        guard let algorithm = current.algorithm(of: kid) else { return nil }
        if let collection { return (algorithm, collection) }
        let made = await current.collection()
        if generation == self.generation { collection = made }
        return (algorithm, made)
    }

    /// Why the last fetch failed, if it did.
    var failure: String? { lastFailure }

    /// Fetches the JWKS, or waits for the fetch already under way.
    private func fetch() async {
        if let fetching { return await fetching.value }
        let task = Task { await self.fetchNow() }
        fetching = task
        await task.value
        fetching = nil
    }

    private func fetchNow() async {
        guard let url else { return }
        lastFetch = clock.now()
        do {
            let request = HTTPClientRequest(url: url.absoluteString)
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
            guard response.status == .ok else { throw JWKSError("it answered \(response.status.code)") }
            let body = try await response.body.collect(upTo: 1 << 20)
            keys = try JWKSKeys.parse(Data(buffer: body))
            collection = nil
            generation += 1
            lastFailure = nil
            expiresAt = clock.now().addingTimeInterval(Self.cacheTime(response.headers.first(name: "cache-control"), default: configuration.defaultCacheTime))
        } catch {
            lastFailure = "the JWKS at \(url.absoluteString) could not be fetched: \(error)"
            // Keep the keys there were; try again once the rate limit allows.
            expiresAt = clock.now().addingTimeInterval(configuration.minimumRefetchInterval)
        }
    }

    /// How long to keep an answer: its `max-age`, between 1 minute and 1 day, else `fallback`.
    static func cacheTime(_ cacheControl: String?, default fallback: TimeInterval) -> TimeInterval {
        guard let cacheControl else { return fallback }
        for directive in cacheControl.split(separator: ",") {
            let parts = directive.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if parts.count == 2, parts[0].lowercased() == "max-age", let seconds = TimeInterval(parts[1]) {
                return min(max(seconds, 60), 86_400)
            }
        }
        return fallback
    }
}
