import CairnProtocol
import CairnTesting
import Foundation
import Testing

/// The shaped link of the network benchmark: how it reads a link, and that it carries bytes no faster than its rate.
@Suite("Shaped link")
struct ShapedLinkTests {
    @Test("a link is read from RATE[/UPRATE],LATENCY[,loss=PERCENT] and refused with a reason otherwise")
    func parsing() throws {
        let cellular = try LinkProfile(parsing: "20mbit,60ms")
        #expect(cellular.downBitsPerSecond == 20e6 && cellular.upBitsPerSecond == 20e6)
        #expect(cellular.roundTrip == .milliseconds(60) && cellular.connectionLoss == 0)
        #expect(cellular.description == "20mbit/20mbit,60ms")
        let rural = try LinkProfile(parsing: "5mbit/500kbit,0.15s,loss=2%")
        #expect(rural.upBitsPerSecond == 500e3 && rural.roundTrip == .milliseconds(150) && rural.connectionLoss == 0.02)
        for wrong in ["20mbit", "fast,60ms", "20mbit,soon", "20mbit,60ms,loss=200%", "0mbit,60ms"] {
            #expect(throws: LinkProfileError.self, "\(wrong)") { try LinkProfile(parsing: wrong) }
        }
    }

    @Test("bytes cross the link no faster than its rate, a round trip later, and are counted each way")
    func rate() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            // 4 Mbit/s and 100 ms: the contract document (about 200 KB, asked for plain) needs its bytes' time on the wire
            // plus the handshake's and the request's round trips. A lower bound only: a loaded machine is slower, never faster.
            let link = try await ShapedLink.start(upstreamPort: fixture.server.port, profile: try LinkProfile(parsing: "4mbit,100ms"))
            try await withCleanup({ await link.stop() }) {
                let start = ContinuousClock.now
                let reply = try await TestHTTPClient(baseURL: link.baseURL).send(.GET, "/v1/openapi.json")
                let elapsed = ContinuousClock.now - start
                #expect(reply.status == 200 && reply.body.count > 100_000)
                let wire = Duration.milliseconds(Int64(Double(reply.body.count) * 8 / 4e6 * 1000)) + .milliseconds(200)
                #expect(elapsed >= wire, "\(elapsed) for \(reply.body.count) bytes")
                #expect(link.bytesDown > Int64(reply.body.count) && link.bytesUp > 0 && link.connections == 1)
            }
        }
    }

    @Test("a link that drops every connection cuts the answers part-way")
    func loss() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let link = try await ShapedLink.start(upstreamPort: fixture.server.port, profile: try LinkProfile(parsing: "100mbit,2ms,loss=100%"))
            try await withCleanup({ await link.stop() }) {
                // The document (176 KB) is larger than the 64 KiB within which a dropped connection is cut.
                await #expect(throws: (any Error).self) {
                    let reply = try await TestHTTPClient(baseURL: link.baseURL).send(.GET, "/v1/openapi.json")
                    if reply.body.count < 100_000 { throw CancellationError() }
                }
                #expect(link.droppedConnections >= 1)
            }
        }
    }
}
