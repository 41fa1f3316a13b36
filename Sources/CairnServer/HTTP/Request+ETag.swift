import Foundation
import HTTPTypes
import Hummingbird

extension Request {
    /// Whether `If-None-Match` names `etag` (or `*`); it may list several tags, weak ones too.
    func ifNoneMatch(_ etag: String) -> Bool {
        guard let header = headers[.ifNoneMatch] else { return false }
        return header.split(separator: ",").contains { tag in
            let trimmed = tag.trimmingCharacters(in: .whitespaces)
            return trimmed == "*" || trimmed == etag || trimmed == "W/" + etag
        }
    }
}
