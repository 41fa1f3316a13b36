import CairnProtocol
import HTTPTypes

extension HTTPField.Name {
    /// `Cairn-Client-ID`: the registered client sending the request.
    static let cairnClientID = HTTPField.Name(CairnHeader.clientID)!
    /// `Cairn-Schema-Version`: the schema number the app build was made for.
    static let cairnSchemaVersion = HTTPField.Name(CairnHeader.schemaVersion)!
    /// `Prefer`: what the client prefers of the answer (RFC 7240).
    static let prefer = HTTPField.Name(CairnHeader.prefer)!
    /// `Preference-Applied`: the `Prefer` values the answer honours (RFC 7240).
    static let preferenceApplied = HTTPField.Name(CairnHeader.preferenceApplied)!
    /// `Upload-Offset`: the bytes of a file upload received so far.
    static let uploadOffset = HTTPField.Name(CairnHeader.uploadOffset)!
    /// `Upload-Length`: a file upload's declared size.
    static let uploadLength = HTTPField.Name(CairnHeader.uploadLength)!
    /// `Cairn-Cursor`: a changes page's cursor, in its head.
    static let cairnCursor = HTTPField.Name(CairnHeader.cursor)!
    /// `Cairn-Has-More`: whether another changes page follows, in its head.
    static let cairnHasMore = HTTPField.Name(CairnHeader.hasMore)!
    /// `Server-Timing`: how long the server took to read a changes page (`feed;dur=MILLISECONDS`).
    static let serverTiming = HTTPField.Name(CairnHeader.serverTiming)!
    /// `Referrer-Policy`: what the browser tells other sites about the page a request came from.
    static let referrerPolicy = HTTPField.Name("Referrer-Policy")!
}
