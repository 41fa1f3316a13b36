import CairnProtocol
import Foundation

/// `console-path`: the console's file lookup, given the request's path as the input. A console folder holds a few
/// files, and files lie beside it (and in a folder inside it); whatever the name, the file served is one of the
/// folder's own served files, under its own name, and never one from outside it.
enum ConsolePathTarget {
    static let root: URL = {
        let base = FileManager.default.temporaryDirectory.appending(path: "cairn-fuzz-console-\(getpid())")
        let console = base.appending(path: "console")
        try? FileManager.default.createDirectory(at: console.appending(path: "inner"), withIntermediateDirectories: true)
        let files = [
            "console/index.html": "<html>index</html>", "console/app.js": "app", "console/style.css": "css", "console/.hidden.js": "hidden",
            "console/notes.txt": "not served", "console/inner/deep.js": "deep", "secret.js": "SECRET", "console.js": "beside",
            "passwd.html": "outside",
        ]
        for (path, text) in files { try? Data(text.utf8).write(to: base.appending(path: path)) }
        return console
    }()

    static let console = ConsoleFiles(directory: root)
    /// The files the console may serve: regular files directly in the folder, of a served type.
    static let served: [String: String] = ["index.html": "<html>index</html>", "app.js": "app", "style.css": "css"]

    static func run(_ bytes: [UInt8]) {
        require(Set(console.files.keys) == Set(served.keys).union([".hidden.js"]), "the console read \(console.files.keys.sorted())")
        let name = String(decoding: bytes, as: UTF8.self)
        // As the route hands it over: the path after /console/, percent-decoded or not.
        for candidate in [name, name.removingPercentEncoding].compactMap({ $0 }) {
            guard let file = console.file(named: candidate) else { continue }
            guard let expected = served[candidate] else {
                return require(false, "\(candidate.debugDescription) serves a file that is not one of the console's")
            }
            require(file.bytes == Array(expected.utf8), "\(candidate.debugDescription) serves other bytes than the console's file")
        }
    }
}
