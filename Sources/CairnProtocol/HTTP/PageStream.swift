/// Several changes pages in one answer (PROTOCOL.md, Pull): a pull asks with `pages=N` and gets up to `N` page objects,
/// one per line (`application/x-ndjson`), each exactly the answer of one page and each with its own cursor. The pages
/// flow back to back, so a link with a long round trip pays it once per answer instead of once per page; the client
/// commits each page as it arrives and, after a cut, goes on from the last cursor it committed.
///
/// ```swift
/// // GET .../collections/notes/changes?since=CURSOR&limit=2000&pages=100
/// let isStream = PageStream.isStream(contentType: response.header("Content-Type"))
/// ```
public enum PageStream {
    /// The query parameter that asks for several pages.
    public static let parameter = "pages"
    /// The most pages one answer carries.
    public static let maximumPages = 1000
    /// The media type of an answer of several pages: newline-delimited JSON.
    public static let mediaType = "application/x-ndjson"

    /// True when a changes answer's `Content-Type` says it carries pages one per line.
    public static func isStream(contentType: String?) -> Bool {
        contentType?.lowercased().hasPrefix(mediaType) ?? false
    }
}
