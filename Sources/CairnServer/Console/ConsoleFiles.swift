import CairnProtocol
import Crypto
import Foundation

/// The operators' console: the static files under `Resources/console`, read once from the module's bundle and
/// served from memory by ``ConsoleRoutes``. A request names a file by its bare name only, so no path can reach
/// anything else.
struct ConsoleFiles: Sendable {
    /// One file: its bytes, content type and strong ETag (the SHA-256 of the bytes).
    struct File: Sendable {
        let bytes: [UInt8]
        let contentType: String
        let etag: String
    }

    /// The files by name (`index.html`, `app.js`...).
    let files: [String: File]

    /// Reads every regular file directly in `directory` (none when it is `nil` or unreadable).
    init(directory: URL?) {
        var files: [String: File] = [:]
        let names = directory.flatMap { try? FileManager.default.contentsOfDirectory(atPath: $0.path) } ?? []
        for name in names {
            guard let directory, let type = Self.contentTypes[(name as NSString).pathExtension],
                let data = try? Data(contentsOf: directory.appending(path: name))
            else { continue }
            files[name] = File(bytes: Array(data), contentType: type, etag: "\"\(Hex.encode(SHA256.hash(data: data)))\"")
        }
        self.files = files
    }

    /// The file called `name`, or `nil` (an unknown name, or one with a path in it).
    func file(named name: String) -> File? {
        guard !name.contains("/"), !name.contains("\\"), !name.hasPrefix(".") else { return nil }
        return files[name]
    }

    /// The types the console's files are served with, by extension; files of other types are not served.
    static let contentTypes: [String: String] = [
        "html": "text/html; charset=utf-8",
        "js": "text/javascript; charset=utf-8",
        "css": "text/css; charset=utf-8",
        "svg": "image/svg+xml",
        "png": "image/png",
    ]
}
