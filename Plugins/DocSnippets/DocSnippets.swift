import Foundation
import PackagePlugin

/// Compiles the documentation's code: extracts every ```swift block of README.md and of the DocC catalogs into
/// Swift files of the target it is applied to, so a renamed API breaks the build instead of the docs.
@main
struct DocSnippets: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let root = context.package.directoryURL
        var documents = [root.appending(path: "README.md")]
        let sources = root.appending(path: "Sources")
        let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)
        while let file = files?.nextObject() as? URL {
            if file.pathExtension == "md", file.deletingLastPathComponent().pathExtension == "docc" { documents.append(file) }
        }
        documents.sort { $0.path < $1.path }
        let output = context.pluginWorkDirectoryURL.appending(path: "Snippets")
        let outputs = documents.map { document in
            output.appending(path: Self.fileName(for: String(document.standardizedFileURL.path.dropFirst(root.standardizedFileURL.path.count + 1))))
        }
        return [
            .buildCommand(
                displayName: "Extracting the Swift code of \(documents.count) documents",
                executable: try context.tool(named: "cairn-doc-snippets").url,
                arguments: [root.path] + zip(documents, outputs).flatMap { [$0.path, $1.path] },
                inputFiles: documents,
                outputFiles: outputs)
        ]
    }

    /// `README.md` becomes `README_md.swift`, `Sources/Cairn/Cairn.docc/Files.md` becomes `Cairn_docc_Files_md.swift`;
    /// the name, without `.swift`, is the document's namespace in the generated code.
    static func fileName(for relativePath: String) -> String {
        let parts = relativePath.split(separator: "/").filter { $0 != "Sources" }
        let kept = parts.count > 2 ? Array(parts.suffix(2)) : parts
        return kept.joined(separator: "_").map { $0.isLetter || $0.isNumber ? String($0) : "_" }.joined() + ".swift"
    }
}
