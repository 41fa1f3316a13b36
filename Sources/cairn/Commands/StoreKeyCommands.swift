import ArgumentParser
import Cairn
import Foundation

/// `cairn store`: encrypt, decrypt or re-key a local store file (close every app and tool that has it open first).
struct StoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store",
        abstract: "Encrypt, decrypt or re-key a local store (offline; close everything that has it open first).",
        discussion: """
            The current passphrase comes from --key-file or CAIRN_STORE_KEY, as for sync; the new one from \
            --new-key-file. Each rewrites the store beside itself and renames it over the old file in one step, so an \
            interrupted run leaves a store that opens with the old passphrase or the new one.

            Examples:
              cairn store encrypt --store field.sqlite --new-key-file new.key
              cairn store rekey --store field.sqlite --key-file old.key \\
                --new-key-file new.key
              cairn store decrypt --store field.sqlite --key-file old.key
            """,
        subcommands: [Encrypt.self, Rekey.self, Decrypt.self])

    /// The store and its current key.
    struct Target: ParsableArguments {
        @Option(name: .long, help: "The local store file.") var store: String
        @Option(name: .customLong("key-file"), help: "A file holding the current passphrase (default: CAIRN_STORE_KEY).")
        var keyFile: String?

        func currentKey() throws -> StoreKey {
            guard let key = try StoreKeySource.key(file: keyFile) else {
                throw CLIError("give the store's current passphrase with --key-file FILE or CAIRN_STORE_KEY")
            }
            return key
        }

        func ensureExists() throws {
            guard FileManager.default.fileExists(atPath: store) else { throw CLIError("there is no store at \(store)") }
        }
    }

    struct Encrypt: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Encrypt a plaintext store with the passphrase in --new-key-file.")
        @Option(name: .long, help: "The local store file.") var store: String
        @Option(name: .customLong("new-key-file"), help: "A file holding the new passphrase.") var newKeyFile: String

        func run() throws {
            guard FileManager.default.fileExists(atPath: store) else { throw CLIError("there is no store at \(store)") }
            let key = try StoreKeySource.key(fromFile: newKeyFile)
            try CLIError.wrap("cannot encrypt \(store)") { try StoreEncryption.encrypt(storeAt: store, with: key) }
            print("encrypted \(store)")
        }
    }

    struct Rekey: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Re-encrypt a store under the passphrase in --new-key-file.")
        @OptionGroup var target: Target
        @Option(name: .customLong("new-key-file"), help: "A file holding the new passphrase.") var newKeyFile: String

        func run() throws {
            try target.ensureExists()
            let (key, newKey) = (try target.currentKey(), try StoreKeySource.key(fromFile: newKeyFile))
            try CLIError.wrap("cannot re-key \(target.store)") { try StoreEncryption.rekey(storeAt: target.store, from: key, to: newKey) }
            print("re-keyed \(target.store)")
        }
    }

    struct Decrypt: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Decrypt a store: afterwards it opens without a passphrase.")
        @OptionGroup var target: Target

        func run() throws {
            try target.ensureExists()
            let key = try target.currentKey()
            try CLIError.wrap("cannot decrypt \(target.store)") { try StoreEncryption.decrypt(storeAt: target.store, with: key) }
            print("decrypted \(target.store)")
        }
    }
}
