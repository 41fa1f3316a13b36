import CairnProtocol
import Foundation
import GRDB

/// The store's side of files, over the tables it owns: upload jobs and the record fields that show them
/// (``FileUploadTable``), the files kept on this device (``FileCacheTable``), file deletions waiting for a sync
/// (``FileDeletionTable``), and whether the kept files are sealed.
///
/// ```swift
/// try store.files.queueFileUpload(job)
/// let ready = try store.files.readyFileUploads(now: Date(), retry: RetryPolicy())
/// ```
struct LocalFiles: Sendable {
    /// The store whose tables hold the files' bookkeeping.
    let store: LocalStore

    /// The prefix of local file ids, which only this device knows.
    static let localFilePrefix = "local-"
}

extension LocalFiles {
    /// Whether every kept file is known to be sealed (see ``FileFolder/sealLeftovers(with:)``).
    func filesAreSealed() throws -> Bool { try store.meta(.filesSealed) != nil }

    /// Notes that every kept file is sealed, or (for a plaintext store) that new files are kept in the clear again.
    func setFilesSealed(_ sealed: Bool) throws {
        try store.writer.write { db in try store.metaTable.set(db, .filesSealed, sealed ? "1" : nil) }
    }
}

extension FileSealing {
    /// The files key kept in the store's `cairn_meta`, made and kept there first for an `encrypted` store that has
    /// none yet.
    static func stored(_ db: Database, in meta: MetaTable, encrypted: Bool, canWrite: Bool = true) throws -> FileSealing? {
        if let hex = try meta.value(db, .fileKey) {
            guard let sealing = FileSealing(hex: hex) else { throw CairnError(.storeCorrupted, "The store's files key is damaged") }
            return sealing
        }
        // A read-only store seals no new file, so it needs no key it does not have.
        guard encrypted, canWrite else { return nil }
        let sealing = FileSealing.generate()
        try meta.set(db, .fileKey, sealing.hex)
        return sealing
    }
}
