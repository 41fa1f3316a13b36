/// Lowercase hexadecimal text of bytes (digests, tokens); much faster than `String(format:)`.
public enum Hex {
    /// The digits, as UTF-8 bytes.
    static let digits = Array("0123456789abcdef".utf8)

    /// The lowercase hex of `bytes`.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            output.append(digits[Int(byte >> 4)])
            output.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: output, as: UTF8.self)
    }
}
