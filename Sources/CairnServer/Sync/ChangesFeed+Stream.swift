import CairnProtocol
import Hummingbird
import Logging
import NIOCore

extension ChangesFeed {
    /// The body of an answer of several pages (``PageStream``): `first`, then each next page, read from the cursor of
    /// the page before while that one is written, one page object per line, until `count` pages in all or the end of
    /// the feed. Each page is read exactly as a request of its own would read it (its own snapshot, data rules,
    /// `gone`, download query and own writes), so following the lines is following the cursors.
    ///
    /// A page after the first that fails to read ends the answer after the pages already sent: the client goes on
    /// from the last cursor it holds, and that request answers the failure with its status (`410 cursor_expired`, ...).
    /// A client that goes away stops the reading.
    ///
    /// - Parameters:
    ///   - read: reads the page that follows a cursor.
    ///   - sent: told of each page after the first once it is read (the metrics count it).
    static func stream(
        first: Page, count: Int, logger: Logger, read: @escaping @Sendable (FeedCursor) async throws -> Page,
        sent: @escaping @Sendable (Page) -> Void
    ) -> ResponseBody {
        ResponseBody { writer in
            var page = first
            var written = 0
            while true {
                written += 1
                // The next page is read while this one leaves: the link and the database work at once.
                let cursor = page.cursor
                let next: Task<Page, any Error>? = page.hasMore && written < count ? Task { try await read(cursor) } : nil
                do {
                    var line = page.body
                    line.writeInteger(UInt8(ascii: "\n"))
                    try await writer.write(line)
                } catch {
                    next?.cancel()
                    throw error
                }
                guard let next else { break }
                do {
                    page = try await withTaskCancellationHandler { try await next.value } onCancel: { next.cancel() }
                } catch {
                    logger.notice("a page stream ended early", metadata: ["cairn.error": "\(error)", "cairn.pages": "\(written)"])
                    break
                }
                sent(page)
            }
            try await writer.finish(nil)
        }
    }
}
