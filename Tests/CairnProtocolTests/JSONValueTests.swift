import CairnProtocol
import Foundation
import Testing

@Suite("JSON values")
struct JSONValueTests {
    @Test("parsing keeps integers, numbers, strings, booleans, null, arrays and nested objects exactly")
    func roundTrip() throws {
        let text = #"{"a":9007199254740993,"b":-0.5,"c":"é\n\"q\" 😀","d":[true,false,null,{"e":[]}],"f":{},"g":1e3,"h":-12}"#
        let value = try JSONValue(parsing: text)
        #expect(value["a"] == .integer(9_007_199_254_740_993))
        #expect(value["b"] == .number(-0.5))
        #expect(value["c"] == .string("é\n\"q\" 😀"))
        #expect(value["d"] == [true, false, nil, ["e": []]])
        #expect(value["g"] == .number(1000))
        #expect(value["h"] == .integer(-12))
        #expect(try JSONValue(parsing: value.jsonText()) == value)
        #expect(value.jsonText() == value.jsonText())
        // Foundation agrees on the text we write.
        let foundation = try JSONSerialization.jsonObject(with: value.jsonData()) as? [String: Any]
        #expect(foundation?["c"] as? String == "é\n\"q\" 😀")
    }

    @Test("escapes and surrogate pairs decode", arguments: [
        (#""\u00e9\ud83d\ude00\/\b\f\t""#, "é😀/\u{8}\u{c}\t"),
        (#""plain""#, "plain"),
    ])
    func escapes(text: String, expected: String) throws {
        #expect(try JSONValue(parsing: text) == .string(expected))
    }

    @Test("malformed text is refused with an offset", arguments: [
        "", "{", "[1,]", "{\"a\" 1}", "01", "1.", "-", "tru", "\"abc", "\"\\x\"", "\"\\ud800\"", "[1] 2", "{\"a\":1,}", "NaN",
        String(repeating: "[", count: 300) + String(repeating: "]", count: 300),
    ])
    func malformed(text: String) {
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: text) }
    }

    @Test("decoding wire types from parsed values reports the path of a wrong shape")
    func decoderPaths() throws {
        let text = #"{"operations": [{"opId": "a", "collection": "c", "id": "x", "op": "create", "baseVersion": "7"}]}"#
        do {
            _ = try CairnJSON.decode(BatchRequest.self, from: Array(text.utf8))
            Issue.record("expected a failure")
        } catch let DecodingError.typeMismatch(_, context) {
            #expect(context.codingPath.map(\.stringValue) == ["operations", "Index 0", "baseVersion"] ||
                    context.codingPath.map(\.stringValue) == ["operations", "0", "baseVersion"])
        }
        let decoded = try CairnJSON.decode(BatchRequest.self, from: Array(#"{"operations": []}"#.utf8))
        #expect(decoded.atomic == false)
    }

    @Test("JSON Merge Patch follows RFC 7396's examples")
    func mergePatch() throws {
        let cases: [(String, String, String)] = [
            (#"{"a":"b"}"#, #"{"a":"c"}"#, #"{"a":"c"}"#),
            (#"{"a":"b"}"#, #"{"b":"c"}"#, #"{"a":"b","b":"c"}"#),
            (#"{"a":"b"}"#, #"{"a":null}"#, #"{}"#),
            (#"{"a":"b","b":"c"}"#, #"{"a":null}"#, #"{"b":"c"}"#),
            (#"{"a":["b"]}"#, #"{"a":"c"}"#, #"{"a":"c"}"#),
            (#"{"a":"c"}"#, #"{"a":["b"]}"#, #"{"a":["b"]}"#),
            (#"{"a":{"b":"c"}}"#, #"{"a":{"b":"d","c":null}}"#, #"{"a":{"b":"d"}}"#),
            (#"{"a":[{"b":"c"}]}"#, #"{"a":[1]}"#, #"{"a":[1]}"#),
            (#"["a","b"]"#, #"["c","d"]"#, #"["c","d"]"#),
            (#"{"a":"b"}"#, #"["c"]"#, #"["c"]"#),
            (#"{"a":"foo"}"#, "null", "null"),
            (#"{"e":null}"#, #"{"a":1}"#, #"{"a":1,"e":null}"#),
            (#"[1,2]"#, #"{"a":"b","c":null}"#, #"{"a":"b"}"#),
            (#"{}"#, #"{"a":{"bb":{"ccc":null}}}"#, #"{"a":{"bb":{}}}"#),
        ]
        for (target, patch, result) in cases {
            #expect(try JSONValue(parsing: target).merging(patch: JSONValue(parsing: patch)) == JSONValue(parsing: result), "\(target) + \(patch)")
        }
    }

    @Test("RFC 3339 date-times parse with offsets and fractions, and format in UTC with milliseconds")
    func rfc3339() throws {
        let utc = try #require(RFC3339.date(from: "2026-11-22T10:00:00Z"))
        #expect(RFC3339.date(from: "2026-11-22T11:00:00+01:00") == utc)
        #expect(RFC3339.date(from: "2026-11-22t05:30:00-04:30") == utc)
        #expect(RFC3339.string(from: utc) == "2026-11-22T10:00:00.000Z")
        let fraction = try #require(RFC3339.date(from: "2026-11-22T10:00:00.123456Z"))
        #expect(RFC3339.string(from: fraction) == "2026-11-22T10:00:00.123456Z")
        // Any Date survives formatting and parsing exactly.
        for seconds in [0.0, 815_000_000.123_456_7, -1.5, 1e9 + 1.0 / 3, 2_000_000_000.999_999_9] {
            let date = Date(timeIntervalSinceReferenceDate: seconds)
            #expect(RFC3339.date(from: RFC3339.string(from: date)) == date, "\(seconds)")
        }
        #expect(RFC3339.string(from: Date(timeIntervalSince1970: -0.5)) == "1969-12-31T23:59:59.500Z")
        for bad in ["2026-11-22", "2026-02-30T00:00:00Z", "2026-11-22T25:00:00Z", "2026-11-22T10:00:00", "2026-11-22T10:00:00+0100", "x"] {
            #expect(RFC3339.date(from: bad) == nil, "\(bad)")
        }
    }

    @Test("names follow PROTOCOL.md")
    func names() {
        #expect(Names.isValidID("n-1_a.b:c"))
        #expect(!Names.isValidID(""))
        #expect(!Names.isValidID(String(repeating: "a", count: 129)))
        #expect(!Names.isValidID("a b"))
        #expect(!Names.isValidID("é"))
        #expect(Names.isValidProjectName("field_1"))
        #expect(!Names.isValidProjectName("1field"))
        #expect(!Names.isValidProjectName("Field"))
        #expect(Names.isValidCollectionName("notes"))
        #expect(!Names.isValidCollectionName("cairn_meta"))
    }
}
