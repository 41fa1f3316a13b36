import CairnProtocol
import Foundation

extension CairnClient {
    /// Sends this store's diagnostics report (``diagnostics()``) to the server, where the project's admins and the
    /// server's operators read it (`cairn admin diagnostics --project P --client ID`): support without the device in
    /// hand. The report holds ids, counts, times and errors, never record data, tokens or keys, and file names are
    /// withheld. The server keeps the latest report of each client.
    ///
    /// ```swift
    /// let receipt = try await client.uploadDiagnostics()
    /// print("tell support: client \(receipt.clientId)")
    /// ```
    ///
    /// - Throws: the network errors of the upload; `payload_too_large` for a report over 256 KiB.
    @discardableResult
    public func uploadDiagnostics() async throws -> DiagnosticsReceipt {
        let report = try await diagnostics()
        let names = Set(try files.pendingUploads().map(\.name) + files.failedUploads().map(\.name))
        let body = try CairnJSON.encode(report.withholding(fileNames: names))
        let receipt = try await api.uploadDiagnostics(body, clientID: try await registeredClientID())
        engine.log.diagnosticsUploaded(clientID: receipt.clientId, bytes: receipt.bytes)
        return receipt
    }
}
