import CairnProtocol
import Crypto
import Foundation

/// Schema versions and other content digests: SHA-256 in lowercase hex.
public enum SchemaVersioning {
    /// The SHA-256 of `text`'s UTF-8 bytes, as lowercase hex.
    public static func digest(_ text: String) -> String {
        // Through the digest's bytes: iterating the digest itself copies them byte by byte.
        SHA256.hash(data: Data(text.utf8)).withUnsafeBytes { Hex.encode($0) }
    }

    /// `schema` with its `version` set to the digest of its canonical form.
    public static func stamped(_ schema: Schema) -> Schema {
        var stamped = schema
        stamped.version = digest(schema.canonicalText)
        return stamped
    }
}
