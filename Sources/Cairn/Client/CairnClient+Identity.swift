import CairnProtocol
import Foundation

extension CairnClient {
    /// Stops background sync, waits for work in flight, and wipes the store and the tokens. The client cannot be
    /// used afterwards.
    public func signOut() async throws {
        stopScheduler()
        closed.withLock { $0 = true }
        await fileUploader.stop()
        await engine.waitForIdle()
        await auth.forget()
        try store.wipe()
        fileFolder.removeAll()
        await statusCenter.finish()
    }

    /// Signs out and deletes the local database files.
    public func clear() async throws {
        try await signOut()
        if case .file(let path) = configuration.store {
            for suffix in ["", "-wal", "-shm"] {
                try? FileManager.default.removeItem(atPath: path + suffix)
            }
        }
    }

    /// The id the server gave this client (sent as `Cairn-Client-ID`).
    public var clientID: String? { store.clientID }
}
