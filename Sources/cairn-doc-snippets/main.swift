import Foundation

// Writes, for each Markdown document given, a Swift file holding its ```swift blocks, so that the test build
// compiles every code sample of the README and the DocC catalogs (the DocSnippets plugin runs it). Usage:
//   cairn-doc-snippets ROOT DOCUMENT OUTPUT [DOCUMENT OUTPUT ...]
// Each OUTPUT's name, without `.swift`, names the document's namespace; compile errors point at the document's lines.

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count >= 3, arguments.count % 2 == 1 else {
    FileHandle.standardError.write(Data("usage: cairn-doc-snippets ROOT DOCUMENT OUTPUT [DOCUMENT OUTPUT ...]\n".utf8))
    exit(64)
}
let root = URL(fileURLWithPath: arguments[0]).standardizedFileURL.path
do {
    for pair in stride(from: 1, to: arguments.count, by: 2) {
        let document = URL(fileURLWithPath: arguments[pair]).standardizedFileURL
        let output = URL(fileURLWithPath: arguments[pair + 1])
        let text = try String(contentsOf: document, encoding: .utf8)
        let relative = document.path.hasPrefix(root + "/") ? String(document.path.dropFirst(root.count + 1)) : document.lastPathComponent
        let file = SnippetFile(
            document: document.path, relativePath: relative, namespace: output.deletingPathExtension().lastPathComponent,
            snippets: SnippetReader.snippets(in: text))
        try FileManager.default.createDirectory(at: output.deletingLastPathComponent(), withIntermediateDirectories: true)
        try file.source.write(to: output, atomically: true, encoding: .utf8)
    }
} catch {
    FileHandle.standardError.write(Data("cairn-doc-snippets: \(error)\n".utf8))
    exit(1)
}
