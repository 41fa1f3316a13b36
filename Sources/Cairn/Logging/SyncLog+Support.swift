import Logging

/// What the SDK logs about this device's standing with the server: unregistering it and uploading its diagnostics.
extension SyncLog {
    /// The server no longer counts this client (`id`, nil when it never registered) as a device of the project.
    func clientUnregistered(_ id: String?, deletedStore: Bool) {
        logger.info("client unregistered", metadata: ["cairn.client": "\(id ?? "-")", "cairn.store_deleted": "\(deletedStore)"])
    }

    /// A diagnostics report of `bytes` was sent to the server for support.
    func diagnosticsUploaded(clientID: String, bytes: Int) {
        logger.info("diagnostics uploaded", metadata: ["cairn.client": "\(clientID)", "cairn.bytes": "\(bytes)"])
    }
}
