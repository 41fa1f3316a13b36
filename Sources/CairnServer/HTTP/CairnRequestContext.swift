import Hummingbird
import Logging

/// The per-request state routes share: the request id, and who signed in.
public struct CairnRequestContext: RequestContext {
    /// Hummingbird's per-request storage (logger, endpoint path, route parameters such as `:project`).
    public var coreContext: CoreRequestContextStorage
    /// The request id: the caller's `X-Request-ID` when it sent a usable one, else a new one.
    public var requestID: String = ""
    /// Who signed the request in, set by ``AuthenticationMiddleware`` on the routes that need it; `nil` elsewhere.
    var identity: SignedInUser?
    /// The IP address the request came from (the connection's peer), which the sign-in throttle counts by; `nil`
    /// when the connection has none (a Unix socket).
    var clientAddress: String?

    /// Creates the context Hummingbird makes for each request; ``requestID`` is set by the request-log middleware.
    public init(source: Source) {
        self.coreContext = .init(source: source)
        self.clientAddress = source.channel.remoteAddress?.ipAddress
    }

    /// 16 MiB. Cairn's routes ignore it: each collects its body up to its own limit (1 MiB, or
    /// ``ServerConfiguration/maximumBatchBytes`` for batches), over which it answers `413 payload_too_large`.
    public var maxUploadSize: Int { 16 * 1024 * 1024 }
}
