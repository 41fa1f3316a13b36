import Cairn
import Foundation

/// The SDK's HTTP transports the tool can measure: AsyncHTTPClient (the default off Apple platforms) and URLSession
/// (the default on them, and the only one there).
enum BenchTransport: String, CaseIterable {
    case asyncHTTPClient = "asynchttpclient"
    case urlSession = "urlsession"

    /// The transports built into this `cairn`.
    static var available: [BenchTransport] {
        #if canImport(Darwin) || CAIRN_APPLE_EMULATION
        return [.urlSession]
        #else
        return allCases
        #endif
    }

    /// The transport the SDK picks by itself on this platform.
    static var sdkDefault: BenchTransport { available[0] }

    /// A name for tables.
    var title: String { self == .urlSession ? "URLSession" : "AsyncHTTPClient" }

    /// A new transport of this kind.
    func make() -> any HTTPTransport {
        #if canImport(Darwin) || CAIRN_APPLE_EMULATION
        return URLSessionTransport()
        #else
        return self == .urlSession ? URLSessionTransport() : AsyncHTTPClientTransport()
        #endif
    }
}
