import Cairn
import Foundation

/// The transport the fixture's clients talk through: the SDK's default, or ``URLSessionTransport`` when the
/// environment sets `CAIRN_TEST_TRANSPORT=urlsession` (CI runs the client suite a second time that way). Built as
/// Apple platforms get it, URLSession is the only transport there is.
///
/// ```swift
/// let network = SwitchableTransport(inner: TestTransport.make())
/// ```
public enum TestTransport {
    /// True when fixture clients talk through ``URLSessionTransport``.
    public static let usesURLSession: Bool = {
        #if canImport(Darwin) || CAIRN_APPLE_EMULATION
        return true
        #else
        return ProcessInfo.processInfo.environment["CAIRN_TEST_TRANSPORT"] == "urlsession"
        #endif
    }()

    /// A transport of the kind the fixture's clients use, whose connection attempts give up after `connectTimeout`.
    public static func make(connectTimeout: Duration = .seconds(10)) -> any HTTPTransport {
        #if canImport(Darwin) || CAIRN_APPLE_EMULATION
        return URLSessionTransport(connectTimeout: connectTimeout)
        #else
        return usesURLSession ? URLSessionTransport(connectTimeout: connectTimeout) : AsyncHTTPClientTransport(connectTimeout: connectTimeout)
        #endif
    }

    /// The transport to open a client with when the test asks for the SDK's default one: nil (the SDK picks), or
    /// ``URLSessionTransport`` when fixture clients use it.
    public static func defaultTransport(connectTimeout: Duration) -> (any HTTPTransport)? {
        usesURLSession ? make(connectTimeout: connectTimeout) : nil
    }
}
