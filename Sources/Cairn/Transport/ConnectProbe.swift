import Dispatch
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Whether a server's address accepts TCP connections: ``URLSessionTransport`` asks it when a request heard nothing
/// for a while, to tell a server that is slow to answer (alive, wait on) from one that cannot be reached (give up).
/// URLSession itself never says whether its connection was made.
enum ConnectProbe {
    /// True when a TCP connection to `url`'s host and port is made within `timeout`. Runs on a dispatch queue, not
    /// on the cooperative pool, since name look-up and the wait block.
    static func reaches(_ url: URL, within timeout: Duration) async -> Bool {
        guard let host = url.host else { return false }
        let port = url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80)
        let milliseconds = max(1, Int(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000))
        return await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(returning: connects(host: host, port: port, milliseconds: milliseconds))
            }
        }
    }

    /// Tries each of `host`'s addresses in turn until one connects or the time is spent.
    private static func connects(host: String, port: Int, milliseconds: Int) -> Bool {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var first: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &first) == 0, let first else { return false }
        defer { freeaddrinfo(first) }
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(milliseconds) * 1_000_000
        var address: UnsafeMutablePointer<addrinfo>? = first
        while let current = address {
            let now = DispatchTime.now().uptimeNanoseconds
            guard now < deadline else { return false }
            if connects(to: current.pointee, milliseconds: Int32(clamping: (deadline - now) / 1_000_000)) { return true }
            address = current.pointee.ai_next
        }
        return false
    }

    /// One non-blocking connection attempt to `address`, waiting at most `milliseconds` for it to complete.
    private static func connects(to address: addrinfo, milliseconds: Int32) -> Bool {
        let socket = Glue.socket(address.ai_family, address.ai_socktype, address.ai_protocol)
        guard socket >= 0 else { return false }
        defer { _ = close(socket) }
        _ = fcntl(socket, F_SETFL, fcntl(socket, F_GETFL, 0) | O_NONBLOCK)
        if connect(socket, address.ai_addr, address.ai_addrlen) == 0 { return true }
        guard errno == EINPROGRESS else { return false }
        var poller = pollfd(fd: socket, events: Int16(POLLOUT), revents: 0)
        guard poll(&poller, 1, milliseconds) == 1 else { return false }
        var failure: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(socket, SOL_SOCKET, SO_ERROR, &failure, &length) == 0 else { return false }
        return failure == 0
    }

    /// The C library's `socket`, named apart from the local of the same name.
    private enum Glue {
        static func socket(_ family: Int32, _ type: Int32, _ proto: Int32) -> Int32 {
            #if canImport(Glibc)
            Glibc.socket(family, type, proto)
            #else
            Darwin.socket(family, type, proto)
            #endif
        }
    }
}
