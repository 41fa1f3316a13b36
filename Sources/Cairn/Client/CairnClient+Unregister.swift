import CairnProtocol
import Foundation

extension CairnClient {
    /// Removes this device from the server (SAP's `unregisterClient`): the project no longer lists it among its
    /// clients, and it holds no tombstones back. The client is closed afterwards.
    ///
    /// What was written here is uploaded first: it pushes the queued changes and waits for the queued files, and
    /// when anything stays (offline, or refused by the server) it throws `pending_changes` and changes nothing, so
    /// retiring a device never loses work by surprise. `discardingPendingChanges` skips that: what was not uploaded
    /// is dropped (the records show their server state again).
    ///
    /// With `deleteStore` the local store and its files are deleted as ``clear()`` does; without it they stay, with
    /// the server's id of this client forgotten, so opening the store again (connected) registers a new client.
    ///
    /// ```swift
    /// try await client.unregister(deleteStore: true)   // the device is handed back: nothing of it is left
    /// ```
    ///
    /// With `fromServer: false` nothing is sent (SAP's `unregisterClient(deleteFromServer: false)`): the client is
    /// forgotten locally, offline; the server keeps listing it until an operator removes it. Queued changes stay
    /// queued and go with the new client the next connected open registers, unless the store is deleted, which
    /// needs `discardingPendingChanges` when anything waits (else `pending_changes`).
    ///
    /// - Throws: `pending_changes` when changes or files could not be uploaded; the network errors of the upload
    ///   and of the removal (nothing changed then).
    public func unregister(fromServer: Bool = true, deleteStore: Bool = false, discardingPendingChanges: Bool = false) async throws {
        try checkOpen()
        if fromServer && !discardingPendingChanges {
            try await push()
            await files.waitForUploads()
            let status = await status()
            let left = status.pendingUploads + status.failedUploads + status.pendingFiles + status.failedFiles
            guard left == 0 else {
                throw CairnError(
                    .pendingChanges,
                    "This device still has \(left) change\(left == 1 ? "" : "s") or file\(left == 1 ? "" : "s") the server did not take, "
                        + "so it stays registered: sync (or retry or discard the failed ones) and unregister again, or pass discardingPendingChanges: true")
            }
        } else if !fromServer, deleteStore, !discardingPendingChanges,
            try hasPendingUpload || !(files.pendingUploads() + files.failedUploads()).isEmpty
        {
            throw CairnError(
                .pendingChanges,
                "This device has changes or files the server does not have yet; deleting the store would lose them: sync first, "
                    + "or pass discardingPendingChanges: true")
        }
        let id = store.clientID
        if fromServer, let id { try await api.unregisterClient(id) }
        engine.log.clientUnregistered(id, deletedStore: deleteStore)
        if deleteStore {
            try await clear()
            return
        }
        if discardingPendingChanges { try await discardUnsent() }
        do { try store.setClientID(nil) } catch { throw CairnError.store(error) }
        try await close()
    }

    /// Drops every queued and failed change (each record shows its server state again), every queued action call and
    /// every file upload.
    private func discardUnsent() async throws {
        for call in try queuedActions() { try cancelQueuedAction(key: call.key) }
        var ids: [String: Set<String>] = [:]
        for operation in try pendingOperations() { ids[operation.collection, default: []].insert(operation.recordID) }
        for operation in try failedOperations() { ids[operation.collection, default: []].insert(operation.recordID) }
        for (collection, records) in ids { try undoPendingChanges(in: collection, ids: Array(records)) }
        for upload in try files.pendingUploads() + files.failedUploads() { try await files.discard(upload.id) }
    }
}
