#if canImport(Glibc)
import Glibc
import Foundation

/// A loopback port whose connection attempts are never answered: a listener whose accept queue is full and
/// never drained, so the kernel drops new connection requests and clients wait for their connect timeout,
/// as they do behind a firewall that drops packets.
///
/// ```swift
/// let port = try UnansweredPort()
/// defer { port.close() }
/// configuration.serverURL = port.url
/// configuration.connectTimeout = .milliseconds(500)
/// ```
///
/// Linux only: it relies on Linux dropping connection requests to a full accept queue.
public final class UnansweredPort: @unchecked Sendable {
    /// The loopback port that never answers; ``url`` points at it.
    public let port: Int
    private let listener: Int32
    private var fillers: [Int32] = []

    /// Opens the listener and fills its accept queue.
    public init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw POSIXError(.EMFILE) }
        self.listener = listener
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(listener, 0) == 0 else { Glibc.close(listener); throw POSIXError(.EADDRINUSE) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        var fillers: [Int32] = []
        // A backlog of 0 holds one finished connection; a few more connects make sure the queue is full.
        for _ in 0..<3 {
            let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            _ = fcntl(filler, F_SETFL, fcntl(filler, F_GETFL) | O_NONBLOCK)
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(filler, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            fillers.append(filler)
        }
        self.fillers = fillers
        usleep(50_000)
    }

    /// `http://127.0.0.1:PORT`.
    public var url: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// Closes the listener and the connections that filled it.
    public func close() {
        for filler in fillers { _ = Glibc.close(filler) }
        fillers.removeAll()
        _ = Glibc.close(listener)
    }

    deinit { close() }
}
#endif
