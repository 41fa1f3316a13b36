#if canImport(Glibc)
import Foundation
import Glibc

/// A loopback HTTP server that holds its first connection's answer until a second connection arrives, then answers
/// `200 slow` on the first: a live server slower to answer than a client's connect timeout.
final class SlowAnsweringServer: @unchecked Sendable {
    let port: Int
    private let listener: Int32
    private let thread: Thread

    init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw POSIXError(.EMFILE) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(listener, 8) == 0 else { Glibc.close(listener); throw POSIXError(.EADDRINUSE) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        self.listener = listener
        thread = Thread {
            let first = accept(listener, nil, nil)
            let second = accept(listener, nil, nil)
            guard first >= 0 else { return }
            var request = [UInt8](repeating: 0, count: 4096)
            _ = read(first, &request, request.count)
            let answer = Array("HTTP/1.1 200 OK\r\nContent-Length: 4\r\nConnection: close\r\n\r\nslow".utf8)
            _ = write(first, answer, answer.count)
            Glibc.close(first)
            if second >= 0 { Glibc.close(second) }
        }
        thread.start()
    }

    /// `http://127.0.0.1:PORT`.
    var url: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// Stops listening; an `accept` still waiting returns.
    func close() {
        shutdown(listener, Int32(SHUT_RDWR))
        Glibc.close(listener)
    }
}
#endif
