import Foundation

/// The Swift file made of one document's snippets: its imports at the top, then a namespace named after the
/// document that holds the snippets' declarations and one function per snippet's statements. Names a snippet uses
/// without declaring (`client`, `configuration`, `password`) come from the snippets target's own context file.
struct SnippetFile {
    /// The document's absolute path, for `#sourceLocation`.
    var document: String
    /// The path inside the package, such as `Sources/Cairn/Cairn.docc/Files.md`.
    var relativePath: String
    /// The type that holds the document's snippets, such as `Cairn_docc_Files_md`.
    var namespace: String
    var snippets: [Snippet]

    var source: String {
        let split = snippets.map(SplitSnippet.init)
        var imports = Set(["import Foundation"])
        // An article of `Sources/MODULE/MODULE.docc` is about MODULE: its samples see it as the catalog's readers do.
        let parts = relativePath.split(separator: "/")
        if parts.count >= 3, parts[0] == "Sources", parts[2].hasSuffix(".docc") { imports.insert("import \(parts[1])") }
        for part in split { imports.formUnion(part.imports) }
        var out = "// Generated from \(relativePath) by cairn-doc-snippets at build time: edit the document, not this file.\n"
        for line in imports.sorted() {
            let module = line.dropFirst("import ".count).split(separator: " ").first.map(String.init) ?? ""
            out += "#if canImport(\(module))\n\(line)\n#endif\n"
        }
        out += "\nstruct \(namespace) {\n"
        for (number, (snippet, part)) in zip(snippets, split).enumerated() {
            if let module = snippet.requires { out += "#if canImport(\(module))\n" }
            for declaration in part.declarations {
                out += "#sourceLocation(file: \"\(document)\", line: \(declaration.line))\n"
                out += declaration.lines.joined(separator: "\n") + "\n#sourceLocation()\n"
            }
            if !part.statements.isEmpty {
                out += "func snippet\(number + 1)() async throws {\n"
                for run in part.statements {
                    out += "#sourceLocation(file: \"\(document)\", line: \(run.line))\n"
                    out += run.lines.joined(separator: "\n") + "\n#sourceLocation()\n"
                }
                out += "}\n"
            }
            if snippet.requires != nil { out += "#endif\n" }
        }
        out += "}\n"
        return out
    }
}
