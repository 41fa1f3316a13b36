import Foundation
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `URLSession` made for ``URLSessionTransport`` with its delegate, invalidated (letting running requests finish)
/// when the last transport using it goes.
final class URLSessionHandle: Sendable {
    let session: URLSession
    let events: URLSessionEvents

    /// The session of transports made without a configuration of their own.
    static let shared = URLSessionHandle(configuration: .default)

    init(configuration: URLSessionConfiguration) {
        let events = URLSessionEvents()
        self.events = events
        self.session = URLSession(configuration: configuration, delegate: events, delegateQueue: nil)
    }

    deinit { session.finishTasksAndInvalidate() }
}

/// The session's delegate: hands each task's events to its ``URLSessionExchange``, on the session's serial queue.
/// The session-wide delegate is the one both Apple's Foundation and Linux's FoundationNetworking call.
final class URLSessionEvents: NSObject, URLSessionDataDelegate, Sendable {
    private let exchanges = Mutex<[Int: URLSessionExchange]>([:])

    /// Routes the events of `task` to `exchange` until it ends; call before the task is resumed.
    func register(_ exchange: URLSessionExchange, for task: URLSessionTask) {
        exchanges.withLock { $0[task.taskIdentifier] = exchange }
    }

    private func exchange(_ task: URLSessionTask) -> URLSessionExchange? {
        exchanges.withLock { $0[task.taskIdentifier] }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        if exchange(dataTask)?.received(data, response: dataTask.response) == false { dataTask.cancel() }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64, totalBytesExpectedToSend: Int64
    ) {
        exchange(task)?.sent(totalBytesSent)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let exchange = exchanges.withLock { $0.removeValue(forKey: task.taskIdentifier) }
        exchange?.completed(error, response: task.response)
    }
}
