import Crypto
import CryptoExtras
import Foundation

/// The key of an encrypted store: 256 random bits, or a passphrase stretched with PBKDF2-SHA256 and the store's
/// random salt.
///
/// A key never prints: its description, debug description and mirror say `<redacted>`.
///
/// ```swift
/// var configuration = CairnConfiguration(serverURL: url, project: "field", device: "iPad-7",
///                                        credentials: credentials, store: .file(path))
/// configuration.storeKey = .passphrase(passphraseFromTheKeychain)
/// ```
public struct StoreKey: Sendable {
    enum Material: Sendable {
        case raw(SymmetricKey)
        case passphrase(String)
    }

    let material: Material

    /// PBKDF2-SHA256 rounds for passphrases given to new stores (OWASP's 2023 figure). A store keeps its own count.
    public static let passphraseRounds = 600_000

    /// A raw 256-bit key (32 bytes), used as it is. Throws `invalid_argument` for any other length.
    public static func raw(_ bytes: some DataProtocol) throws -> StoreKey {
        guard bytes.count == 32 else {
            throw CairnError(.invalidArgument, "A raw store key holds 32 bytes (256 bits), not \(bytes.count)")
        }
        return StoreKey(material: .raw(SymmetricKey(data: Data(bytes))))
    }

    /// A passphrase, stretched with PBKDF2-SHA256 (``passphraseRounds`` rounds) and the store's random salt.
    public static func passphrase(_ passphrase: String) -> StoreKey {
        StoreKey(material: .passphrase(passphrase))
    }

    /// A new random 256-bit key; keep its ``rawBytes`` somewhere safe (the Keychain on Apple platforms).
    public static func generate() -> StoreKey {
        StoreKey(material: .raw(SymmetricKey(size: .bits256)))
    }

    /// The 32 bytes of a raw key, or nil for a passphrase.
    public var rawBytes: Data? {
        guard case .raw(let key) = material else { return nil }
        return key.withUnsafeBytes { Data($0) }
    }

    /// The 256-bit key for a store whose header has this salt and round count.
    func derive(salt: Data, rounds: Int) throws -> SymmetricKey {
        switch material {
        case .raw(let key):
            return key
        case .passphrase(let text):
            return try KDF.Insecure.PBKDF2.deriveKey(
                from: Data(text.utf8), salt: salt, using: .sha256, outputByteCount: 32, unsafeUncheckedRounds: rounds)
        }
    }

    /// True for a passphrase (the header records PBKDF2 and its rounds).
    var isPassphrase: Bool {
        if case .passphrase = material { return true }
        return false
    }
}

extension StoreKey: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// `StoreKey(raw: <redacted>)` or `StoreKey(passphrase: <redacted>)`.
    public var description: String { isPassphrase ? "StoreKey(passphrase: <redacted>)" : "StoreKey(raw: <redacted>)" }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// Mirrors show no key material either.
    public var customMirror: Mirror { Mirror(self, children: ["key": "<redacted>"], displayStyle: .struct) }
}
