import Foundation

/// A client's latest diagnostics report as the storage keeps it: its JSON text and when it came.
public struct StoredDiagnostics: Sendable, Hashable {
    /// The report's JSON text.
    public var report: String
    /// When the server received it.
    public var uploadedAt: Date

    /// A stored report.
    public init(report: String, uploadedAt: Date) {
        self.report = report
        self.uploadedAt = uploadedAt
    }
}
