import Cairn
import CairnProtocol
import Foundation

/// A diagnostics report as lines for a terminal, for `cairn status`, `cairn diagnostics` and `cairn admin diagnostics`:
/// the verdict, a line saying whose report it is, then the scheduler, the queue, each collection, refused uploads,
/// stopped files and the latest errors.
enum DiagnosticsText {
    static func lines(_ report: Diagnostics, about: String) -> [String] {
        var lines = ["\(report.verdict.rawValue): \(report.explanation)", about]
        lines.append("scheduler: \(report.scheduler.rawValue)" + (report.liveConnected ? ", live connection open" : "")
                     + (report.nextScheduledActionDescription.map { ", next: \($0)" } ?? ""))
        lines.append("last upload: \(report.lastUpload.map(RFC3339.string(from:)) ?? "never")"
                     + (report.lastUploadRate.map { String(format: " (%.0f operations/s)", $0) } ?? "")
                     + ", last download: \(report.lastDownload.map(RFC3339.string(from:)) ?? "never")"
                     + (report.lastDownloadRate.map { String(format: " (%.0f records/s)", $0) } ?? ""))
        lines.append("queue: \(report.queueDepth) change(s)" + (report.oldestPendingAgeSeconds.map { String(format: ", oldest %.0f s old", $0) } ?? ""))
        for collection in report.collections {
            let age = collection.lastPullAgeSeconds.map { String(format: "%.0f s ago", $0) } ?? "never"
            lines.append("  \(collection.name): \(collection.rows) rows, last pull \(age)\(collection.partial ? ", through download queries" : "")"
                         + (collection.firstPullCompleted ? "" : ", first pull not complete"))
        }
        for failed in report.failedUploads {
            lines.append("  refused: \(failed.operation) \(failed.collection)/\(failed.id): \(failed.error.code.rawValue): \(failed.error.message)")
        }
        for file in report.failedFiles {
            lines.append("  file stopped: \(file.name) (\(file.localID)): \(file.error.map { "\($0.code.rawValue): \($0.message)" } ?? "-")")
        }
        for error in report.recentErrors.prefix(3) {
            lines.append("  error at \(RFC3339.string(from: error.at)): \(error.message)")
        }
        return lines
    }

    /// Prints a store's report: as JSON with `json`, else as ``lines(_:about:)`` naming the store at `path`.
    static func print(_ report: Diagnostics, store path: String, json: Bool) throws {
        Swift.print(json ? try report.jsonText() : lines(report, about: "store \(path) " + store(report)).joined(separator: "\n"))
    }

    /// The line naming a report's store: its user, server, project and schema.
    static func store(_ report: Diagnostics) -> String {
        "of \(report.user) at \(report.server), project \(report.project), schema \(report.schemaVersion.isEmpty ? "-" : report.schemaVersion)"
    }
}
