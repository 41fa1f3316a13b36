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

    /// Whether `byte` is an ASCII hex digit, of either case.
    public static func isDigit(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x61...0x66).contains(byte) || (0x41...0x46).contains(byte)
    }
}
