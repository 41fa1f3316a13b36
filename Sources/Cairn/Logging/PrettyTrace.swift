import CairnProtocol
import Foundation
import Logging

/// One traced request as a block a person reads (``TraceFormat/pretty``):
///
/// ```text
/// POST /v1/projects/field/sync/batch → 200 in 12 ms, 340 B sent, 1.2 KB received
/// request body:
///   {
///     "atomic" : false,
///     ...
/// ```
///
/// Built from the facts ``TracingTransport`` gathered as metadata; bodies only when they may be logged, gzip ones
/// decompressed, JSON indented with sorted keys, anything else shown as text.
struct PrettyTrace {
    /// The most of a body shown; a longer one is cut, saying how much was left out.
    static let bodyLimit = 64 << 10

    let text: String

    init(request: TransportRequest, facts: Logger.Metadata, withData: Bool, withBodies: Bool, responseBody: Data?) {
        var head = "\(request.method) \(request.url.path)"
        if let status = facts["cairn.status"] { head += " → \(status)" }
        if let error = facts["cairn.error"] { head += " → failed (\(error))" }
        if let ms = facts["cairn.ms"] { head += " in \(ms) ms" }
        if let sent = facts["cairn.request_bytes"].flatMap({ Int("\($0)") }) { head += ", \(Self.size(sent)) sent" }
        if let received = facts["cairn.response_bytes"].flatMap({ Int("\($0)") }) { head += ", \(Self.size(received)) received" }
        var lines = [head]
        if withData, let query = request.url.query {
            lines.append("query: \(query.removingPercentEncoding ?? query)")
        }
        if withBodies {
            if let body = request.body, !body.isEmpty { lines.append("request body:\n" + Self.indented(Self.readable(body))) }
            if let body = responseBody, !body.isEmpty { lines.append("response body:\n" + Self.indented(Self.readable(body))) }
        }
        text = lines.joined(separator: "\n")
    }

    /// A byte count as people write it: `340 B`, `1.2 KB`, `3.4 MB`.
    static func size(_ bytes: Int) -> String {
        if bytes < 1000 { return "\(bytes) B" }
        if bytes < 1_000_000 { return String(format: "%.1f KB", Double(bytes) / 1000) }
        return String(format: "%.1f MB", Double(bytes) / 1_000_000)
    }

    /// The body as text: gzip undone, JSON (or JSON lines) indented with sorted keys, cut at ``bodyLimit``.
    static func readable(_ body: Data) -> String {
        var bytes = body
        if bytes.starts(with: [0x1f, 0x8b]), let plain = try? Gzip.decompress(bytes, limit: 16 << 20) { bytes = plain }
        let shown = bytes.prefix(bodyLimit)
        let cut = bytes.count - shown.count
        let text = (cut == 0 ? prettyJSON(shown) ?? prettyJSONLines(shown) : nil) ?? String(decoding: shown, as: UTF8.self)
        return cut == 0 ? text : text + "\n… \(size(cut)) more"
    }

    private static func prettyJSON(_ bytes: Data) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: bytes, options: [.fragmentsAllowed]),
            let pretty = try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .fragmentsAllowed, .withoutEscapingSlashes])
        else { return nil }
        return String(decoding: pretty, as: UTF8.self)
    }

    /// A streamed pull answers one JSON document per line.
    private static func prettyJSONLines(_ bytes: Data) -> String? {
        let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true)
        guard lines.count > 1 else { return nil }
        var documents: [String] = []
        for line in lines {
            guard let document = prettyJSON(Data(line)) else { return nil }
            documents.append(document)
        }
        return documents.joined(separator: "\n")
    }

    private static func indented(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { "  " + $0 }.joined(separator: "\n")
    }
}
