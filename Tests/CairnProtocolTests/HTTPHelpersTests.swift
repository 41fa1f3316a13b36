import CairnProtocol
import Testing

@Suite("The shared HTTP helpers: the Server-Sent Events reader and percent-encoding")
struct HTTPHelpersTests {
    static let stream = ": connected\n\nevent: change\ndata: {\"collection\":\"notes\",\"title\":\"Café ☕\"}\n\n: keep-alive\n\n"
        + "data: first\r\ndata: second\r\n\r\nretry: 1000\n: server shutting down\n\n"

    static let expected = [
        ServerSentEvent(comments: ["connected"]),
        ServerSentEvent(name: "change", data: #"{"collection":"notes","title":"Café ☕"}"#),
        ServerSentEvent(comments: ["keep-alive"]),
        ServerSentEvent(data: "first\nsecond"),
        ServerSentEvent(comments: ["server shutting down"]),
    ]

    @Test("events come out whole however the stream is cut, even inside a UTF-8 character", arguments: [1, 2, 3, 7, 64, 1000])
    func chunked(size: Int) {
        let bytes = Array(Self.stream.utf8)
        var reader = ServerSentEvents()
        var events: [ServerSentEvent] = []
        for start in stride(from: 0, to: bytes.count, by: size) {
            events += reader.feed(bytes[start..<min(start + size, bytes.count)])
        }
        #expect(events == Self.expected)
    }

    @Test("an event waits for its blank line")
    func unfinished() {
        var reader = ServerSentEvents()
        #expect(reader.feed(Array("data: {}\n".utf8)).isEmpty)
        #expect(reader.feed(Array("\n".utf8)) == [ServerSentEvent(data: "{}")])
    }

    @Test("percent-encoding leaves RFC 3986's unreserved characters only")
    func percentEncoding() {
        #expect(PercentEncoding.encode("a-b.c_d~e") == "a-b.c_d~e")
        #expect(PercentEncoding.encode("a b&c=d/e?f") == "a%20b%26c%3Dd%2Fe%3Ff")
        #expect(PercentEncoding.encode(#"{"op":"eq"}"#) == "%7B%22op%22%3A%22eq%22%7D")
        #expect(PercentEncoding.encode("é日") == "%C3%A9%E6%97%A5")
    }

    @Test("Prefer: return=minimal is found among other preferences, in any case, quoted or with parameters")
    func returnPreference() {
        #expect(ReturnPreference.asksForMinimal(["return=minimal"]))
        #expect(ReturnPreference.asksForMinimal(["respond-async, RETURN = \"Minimal\"; foo=bar"]))
        #expect(ReturnPreference.asksForMinimal(["wait=10", "return=minimal"]))
        #expect(ReturnPreference.asksForPositionalResults(["return=minimal, results=positional"]))
        #expect(ReturnPreference.asksForPositionalResults(["return=minimal", "RESULTS=\"Positional\""]))
        #expect(!ReturnPreference.asksForPositionalResults(["return=minimal"]))
        #expect(!ReturnPreference.asksForMinimal([]))
        #expect(!ReturnPreference.asksForMinimal(["return=representation"]))
        #expect(!ReturnPreference.asksForMinimal(["returns=minimal", "minimal", "return"]))
    }
}
