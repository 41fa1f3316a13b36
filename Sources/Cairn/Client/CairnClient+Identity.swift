import CairnProtocol
import Foundation

extension CairnClient {
    /// Stops background sync, waits for work in flight, and wipes the store and the tokens. The client cannot be
    /// used afterwards.
    public func signOut() async throws {
        await stopWork()
        await auth.forget()
        try store.wipe()
        fileFolder.removeAll()
        await statusCenter.finish()
    }

    /// Stops background sync, waits for work in flight and closes the store's database. The client cannot be used
    /// afterwards; the store file can then be copied, re-keyed or deleted. Everything queued stays in the store.
    public func close() async throws {
        await stopWork()
        await statusCenter.finish()
        fileFolder.removeLeftovers()
        do { try store.close() } catch { throw CairnError.store(error) }
    }

    /// Closes the client, then re-encrypts its store file under `newKey` (nil: decrypts it; a plaintext store is
    /// encrypted). Open a new client with the new key afterwards. See ``StoreEncryption``.
    ///
    /// ```swift
    /// try await client.rekey(to: .generate())
    /// ```
    public func rekey(to newKey: StoreKey?) async throws {
        guard case .file(let path) = configuration.store else { throw CairnError.invalid("a store in memory has no file to encrypt") }
        try await close()
        switch (configuration.storeKey, newKey) {
        case (nil, nil): return
        case (nil, let newKey?): try StoreEncryption.encrypt(storeAt: path, with: newKey)
        case (let key?, nil): try StoreEncryption.decrypt(storeAt: path, with: key)
        case (let key?, let newKey?): try StoreEncryption.rekey(storeAt: path, from: key, to: newKey)
        }
    }

    /// Signs out and deletes the local database files (an encrypted store's header, salt and key check with them).
    public func clear() async throws {
        try await signOut()
        try? store.close()
        if case .file(let path) = configuration.store {
            for file in StoreFiles.all(of: path) { try? FileManager.default.removeItem(atPath: file) }
        }
    }

    /// Stops background sync and file transfers, refuses new work and waits for the work in flight: once it
    /// returns, nothing of this client runs.
    private func stopWork() async {
        stopScheduler()
        closed.withLock { $0 = true }
        await fileUploader.stop()
        await background.close()
        await engine.waitForIdle()
        await shared?.close()
    }

    /// The id the server gave this client (sent as `Cairn-Client-ID`).
    public var clientID: String? { store.clientID }
}
