import Foundation
import GRDB

extension LocalStore {
    /// The key of the store's sealed files: made when an encrypted store first opens, kept in its encrypted
    /// `cairn_meta`. A store decrypted later keeps it too, to read the files sealed before.
    var fileSealing: FileSealing? { fileKey.withLock { $0 } }

    /// True when new files must be sealed: the store itself is encrypted.
    var sealsFiles: Bool { configuration.key != nil && fileSealing != nil }

    /// Reads the files key, making one for an encrypted store that has none yet.
    func loadFileSealing() throws {
        let encrypted = configuration.key != nil
        let sealing = try writer.write { db -> FileSealing? in
            if let hex = try metaTable.value(db, .fileKey) {
                guard let sealing = FileSealing(hex: hex) else { throw CairnError(.storeCorrupted, "The store's files key is damaged") }
                return sealing
            }
            guard encrypted else { return nil }
            let sealing = FileSealing.generate()
            try metaTable.set(db, .fileKey, sealing.hex)
            return sealing
        }
        fileKey.withLock { $0 = sealing }
    }

    /// Whether every kept file is known to be sealed (see ``FileFolder/sealLeftovers(with:)``).
    func filesAreSealed() throws -> Bool { try meta(.filesSealed) != nil }

    /// Notes that every kept file is sealed, or (for a plaintext store) that new files are kept in the clear again.
    func setFilesSealed(_ sealed: Bool) throws {
        try writer.write { db in try metaTable.set(db, .filesSealed, sealed ? "1" : nil) }
    }
}
