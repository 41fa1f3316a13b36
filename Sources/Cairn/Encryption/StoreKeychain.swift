#if canImport(Security)
import Foundation
import Security

/// Keeps a generated store key in the Keychain (Apple platforms only): the key never leaves the device and never
/// appears in the app's files or backups.
///
/// ```swift
/// configuration.storeKey = try StoreKeychain.key(account: "alice@field")   // made and saved the first time
/// // ... after client.signOut(), forget it too:
/// try StoreKeychain.delete(account: "alice@field")
/// ```
public enum StoreKeychain {
    /// The Keychain service the keys are saved under unless the app names its own.
    public static let defaultService = "cairn.store-key"

    /// When the key can be read.
    public enum Accessibility: Sendable {
        /// From the first unlock after a restart until the next restart: background sync works while the device is
        /// locked. This device only (never in backups).
        case afterFirstUnlock
        /// Only while the device is unlocked. This device only (never in backups).
        case whenUnlocked

        var attribute: CFString {
            switch self {
            case .afterFirstUnlock: return kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
            case .whenUnlocked: return kSecAttrAccessibleWhenUnlockedThisDeviceOnly
            }
        }
    }

    /// The raw key saved for `account`, generating and saving a new 256-bit key the first time.
    ///
    /// - Throws: `store_failed` with the Keychain's reason when it cannot be read or written (for example while the
    ///   device is locked and the key is ``Accessibility/whenUnlocked``).
    public static func key(account: String, service: String = defaultService, accessibility: Accessibility = .afterFirstUnlock) throws -> StoreKey {
        if let saved = try existingKey(account: account, service: service) { return saved }
        let key = StoreKey.generate()
        var attributes = query(account: account, service: service)
        attributes[kSecValueData as String] = key.rawBytes ?? Data()
        attributes[kSecAttrAccessible as String] = accessibility.attribute
        let status = SecItemAdd(attributes as CFDictionary, nil)
        if status == errSecDuplicateItem, let saved = try existingKey(account: account, service: service) {
            // Another caller saved one first: use theirs.
            return saved
        }
        guard status == errSecSuccess else { throw failure(status, "save") }
        return key
    }

    /// The key saved for `account`, or nil when there is none.
    public static func existingKey(account: String, service: String = defaultService) throws -> StoreKey? {
        var search = query(account: account, service: service)
        search[kSecReturnData as String] = true
        search[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: CFTypeRef?
        let status = SecItemCopyMatching(search as CFDictionary, &result)
        if status == errSecItemNotFound { return nil }
        guard status == errSecSuccess, let bytes = result as? Data else { throw failure(status, "read") }
        return try StoreKey.raw(bytes)
    }

    /// Deletes the key saved for `account` (nothing happens when there is none). A store encrypted with it cannot be
    /// opened afterwards: delete it after ``CairnClient/signOut()``, which wipes the store.
    public static func delete(account: String, service: String = defaultService) throws {
        let status = SecItemDelete(query(account: account, service: service) as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else { throw failure(status, "delete") }
    }

    private static func query(account: String, service: String) -> [String: Any] {
        var query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: account,
        ]
        #if os(macOS)
        // The data-protection keychain, as on iOS: honours `kSecAttrAccessible`, and asks the user nothing.
        query[kSecUseDataProtectionKeychain as String] = true
        #endif
        return query
    }

    private static func failure(_ status: OSStatus, _ action: String) -> CairnError {
        let reason = (SecCopyErrorMessageString(status, nil) as String?) ?? "OSStatus \(status)"
        return CairnError(.storeFailed, "The Keychain could not \(action) the store key: \(reason)")
    }
}
#endif
