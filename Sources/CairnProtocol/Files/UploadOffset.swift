/// The `Upload-Offset` header (PROTOCOL.md, Files): how many bytes of an upload the server holds.
///
/// ```swift
/// let offset = UploadOffset.parse(response.header(CairnHeader.uploadOffset))   // 1048576, or nil
/// ```
public enum UploadOffset {
    /// The byte count the header's value gives (a decimal of at most 18 digits), or `nil` when it gives none: a
    /// negative or signed value is no offset.
    public static func parse(_ value: String?) -> Int64? {
        guard let value, !value.isEmpty, value.utf8.count <= 18, value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int64(value)
    }
}
