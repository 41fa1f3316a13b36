import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A loopback port that nothing listens on (it was free a moment ago): connections to it are refused. In a suite
/// that starts servers in parallel, another server may take the port meanwhile: prefer ``withClosedLoopbackPort(_:)``.
///
/// ```swift
/// let port = try closedLoopbackPort()
/// configuration.serverURL = URL(string: "http://127.0.0.1:\(port)")!
/// ```
public func closedLoopbackPort() throws -> Int {
    let (descriptor, port) = try boundLoopbackSocket()
    _ = close(descriptor)
    return port
}

/// Runs `body` with a loopback port held closed: bound and never listening, so connections to it are refused and no
/// server, of this process or another, can take it until `body` returns.
///
/// ```swift
/// try await withClosedLoopbackPort { port in
///     await #expect(throws: CairnError.self) { try await sync(to: "http://127.0.0.1:\(port)") }
/// }
/// ```
public func withClosedLoopbackPort<T>(_ body: (Int) async throws -> T) async throws -> T {
    let (descriptor, port) = try boundLoopbackSocket()
    defer { _ = close(descriptor) }
    return try await body(port)
}

/// A TCP socket bound to a free port of 127.0.0.1 (not listening yet), and that port: call `listen` on it for a
/// server of a test's own.
public func boundLoopbackSocket() throws -> (descriptor: Int32, port: Int) {
    #if canImport(Glibc)
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #else
    let fd = socket(AF_INET, SOCK_STREAM, 0)
    #endif
    guard fd >= 0 else { throw POSIXError(.EMFILE) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let ok = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
    }
    guard ok else {
        _ = close(fd)
        throw POSIXError(.EADDRINUSE)
    }
    return (fd, Int(UInt16(bigEndian: address.sin_port)))
}
