import CairnProtocol
import Foundation
import Testing

/// Inputs the fuzz targets (Fuzz/, scripts/fuzz/run.sh) found breaking a property, kept so the fixes stay fixed.
@Suite("Fuzz regressions: parsers")
struct FuzzRegressionTests {
    /// `json`: `skipValue` (the scanners' way past members they do not read) let a lone surrogate escape through,
    /// which the parser refuses: a page could then store data text that no longer parses.
    @Test("skipping a value refuses an unpaired surrogate escape, as parsing does", arguments: [
        #"["\ud800"]"#, #"["\udc00"]"#, #"["\ud800\u0041"]"#, #"["\ud800\"]"#, #"{"a":"\uDBFF"}"#,
    ])
    func skipRefusesUnpairedSurrogates(text: String) {
        let bytes = Array(text.utf8)
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: bytes) }
        let skipped = bytes.withUnsafeBufferPointer { buffer -> Bool in
            var parser = JSONParser(bytes: buffer)
            return (try? parser.skipValue()) != nil
        }
        #expect(!skipped)
    }

    @Test("skipping a value passes a surrogate pair")
    func skipPassesSurrogatePairs() throws {
        let bytes = Array(#"["\ud83d\ude00", "x"]"#.utf8)
        #expect(try JSONValue(parsing: bytes) == ["😀", "x"])
        let end = try bytes.withUnsafeBufferPointer { buffer -> Int in
            var parser = JSONParser(bytes: buffer)
            try parser.skipValue()
            return parser.index
        }
        #expect(end == bytes.count)
    }

    /// `http-ranges`: `Upload-Offset: -357` read as an offset of -357 bytes, from which the SDK would resume an upload.
    @Test("Upload-Offset reads non-negative decimals only", arguments: [
        ("-357", nil), ("+5", nil), ("", nil), (" 5", nil), ("5 ", nil), ("1e3", nil), ("1234567890123456789", nil),
        ("0", 0), ("1048576", 1_048_576), ("007", 7), ("123456789012345678", 123_456_789_012_345_678),
    ] as [(String, Int64?)])
    func uploadOffset(text: String, expected: Int64?) {
        #expect(UploadOffset.parse(text) == expected)
    }

    /// `rfc3339`: `0000-01-01T00:00:00+00:01` is year -1 in UTC, which `string(from:)` wrote as `00-1-12-31T...`:
    /// text that reads as no date. Instants outside years 0000...9999 in UTC are no longer read.
    @Test("date-times whose UTC instant leaves years 0000...9999 are refused", arguments: [
        "0000-01-01T00:00:00+00:01", "9999-12-31T23:59:59-23:59", "9999-12-31T23:59:60Z",
    ])
    func dateOutOfRange(text: String) {
        #expect(RFC3339.date(from: text) == nil)
        #expect(RFC3339.instantKey(text) == nil)
    }

    @Test("date-times at the ends of years 0000...9999 read and write back", arguments: [
        "0000-01-01T00:00:00Z", "0000-01-01T00:01:00+00:01", "9999-12-31T23:59:59.999Z", "9999-12-31T00:00:00-23:59",
    ])
    func dateAtTheEnds(text: String) throws {
        let date = try #require(RFC3339.date(from: text))
        #expect(RFC3339.date(from: RFC3339.string(from: date)) == date)
    }

    /// `gzip`: a damaged stream whose trailer declares 23 bytes inflated to 49 under a limit of 37, because the fast
    /// path's buffer had room for more than the declared size.
    @Test("a stream that lies about its size never inflates past the limit")
    func gzipLyingSize() throws {
        let stream = try #require(Hex.decode(
            "1f8b080043660c6b02ffcb48cdc9c95c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5ce3513d8d17000000"))
        if let plain = try? Gzip.decompress(Data(stream), limit: 37) { #expect(plain.count <= 37) }
    }

    /// The JSON parser against JSONTestSuite's `test_parsing` files (Fuzz/Corpus/json): every `y_` file parses,
    /// every `n_` file is refused (`i_` files may go either way).
    @Test("JSONTestSuite: y_ files parse, n_ files are refused")
    func jsonTestSuite() throws {
        let folder = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "../../Fuzz/Corpus/json/test_parsing")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".json") }
        #expect(names.count > 250)
        for name in names.sorted() {
            let bytes = Array(try Data(contentsOf: folder.appending(path: name)))
            let parses = (try? JSONValue(parsing: bytes)) != nil
            if name.hasPrefix("y_") { #expect(parses, "\(name) should parse") }
            if name.hasPrefix("n_") { #expect(!parses, "\(name) should be refused") }
        }
    }

    /// `schema`: `"number": -2` decoded, and the schema was written back without it (a number is written when above 0).
    @Test("a schema's number is refused when negative and reads back otherwise")
    func schemaNumber() throws {
        #expect(throws: DecodingError.self) { try CairnJSON.decode(Schema.self, from: Data(#"{"collections":[],"number":-2}"#.utf8)) }
        for number in [0, 3] {
            let schema = try CairnJSON.decode(Schema.self, from: Data(#"{"collections":[],"number":\#(number)}"#.utf8))
            #expect(try CairnJSON.decode(Schema.self, from: CairnJSON.encode(schema)) == schema)
        }
    }
}
