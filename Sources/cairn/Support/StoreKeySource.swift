import Cairn
import Foundation

/// Where the tool finds a store's key: `--key-file FILE` (its text, without the final newline), else the
/// `CAIRN_STORE_KEY` environment variable, else none (a plaintext store).
///
/// The text is a passphrase, or `raw:` and 64 hex digits for a raw 256-bit key (no stretching: for generated keys).
enum StoreKeySource {
    /// The key from `file` or the environment, or nil when neither gives one.
    static func key(file: String?) throws -> StoreKey? {
        if let file { return try key(fromFile: file) }
        guard let text = ProcessInfo.processInfo.environment["CAIRN_STORE_KEY"], !text.isEmpty else { return nil }
        return try key(fromText: text)
    }

    /// A passphrase, or a raw key written as `raw:` and 64 hex digits.
    static func key(fromText text: String) throws -> StoreKey {
        guard text.hasPrefix("raw:") else { return .passphrase(text) }
        guard let bytes = Hex.decode(String(text.dropFirst(4))), bytes.count == 32 else {
            throw CLIError("a raw store key is raw: and 64 hex digits")
        }
        return try StoreKey.raw(bytes)
    }

    /// The key held by `file`; an unreadable or empty file is an error, never "no key".
    static func key(fromFile file: String) throws -> StoreKey {
        guard let data = FileManager.default.contents(atPath: file) else { throw CLIError("cannot read the key file \(file)") }
        guard var text = String(data: data, encoding: .utf8) else { throw CLIError("the key file \(file) is not UTF-8 text") }
        if text.hasSuffix("\r\n") { text.removeLast(2) } else if text.hasSuffix("\n") { text.removeLast() }
        guard !text.isEmpty else { throw CLIError("the key file \(file) is empty") }
        return try key(fromText: text)
    }
}
