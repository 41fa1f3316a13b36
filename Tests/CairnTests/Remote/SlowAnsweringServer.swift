#if canImport(Glibc)
import CairnTesting
import Foundation
import Glibc

/// A loopback HTTP server that answers nothing until a second connection arrives, then answers `200 slow` on the one
/// that sent a request: a live server slower to answer than a client's connect timeout.
final class SlowAnsweringServer: @unchecked Sendable {
    let port: Int
    private let listener: Int32
    private let thread: Thread

    init() throws {
        let (listener, port) = try boundLoopbackSocket()
        guard listen(listener, 8) == 0 else { Glibc.close(listener); throw POSIXError(.EADDRINUSE) }
        self.port = port
        self.listener = listener
        thread = Thread {
            // The request's connection and the probe's may come in either order: the one that sends bytes is the
            // request's (the probe only connects and closes).
            let connections = [accept(listener, nil, nil), accept(listener, nil, nil)].filter { $0 >= 0 }
            var polls = connections.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            var answered = false
            while !answered, polls.contains(where: { $0.fd >= 0 }), poll(&polls, nfds_t(polls.count), -1) > 0 {
                for index in polls.indices where polls[index].fd >= 0 && polls[index].revents != 0 {
                    var request = [UInt8](repeating: 0, count: 4096)
                    if read(polls[index].fd, &request, request.count) > 0 {
                        let answer = Array("HTTP/1.1 200 OK\r\nContent-Length: 4\r\nConnection: close\r\n\r\nslow".utf8)
                        _ = write(polls[index].fd, answer, answer.count)
                        answered = true
                    }
                    polls[index].fd = -1
                }
            }
            for connection in connections { Glibc.close(connection) }
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
