import Foundation
import NIOCore
import NIOPosix
import Synchronization

/// A TCP proxy on a free loopback port that makes a fast local connection behave like a slow network link: each
/// direction has its bandwidth, shared by every connection as on one real link, and every byte arrives half a round
/// trip after it left; a new connection costs a round trip before its first byte (TCP's handshake). It can also drop
/// a share of connections within the first 64 KiB of their answers. It counts the bytes each way.
///
/// Bytes wait in an unbounded queue, as on a link with a large buffer: the sender is never slowed, the receiver gets
/// the bytes at the link's pace.
///
/// ```swift
/// let link = try await ShapedLink.start(upstreamPort: server.port, profile: try LinkProfile(parsing: "20mbit,60ms"))
/// // point a client at link.baseURL, sync, then read link.bytesDown
/// await link.stop()
/// ```
public final class ShapedLink: Sendable {
    /// The link's settings.
    public let profile: LinkProfile
    private let down: LinkDirection
    private let up: LinkDirection
    private let state: Mutex<State>
    private let listener = Mutex<(any Channel)?>(nil)

    private struct State {
        var random: SplitMix
        var port = 0
        var connections = 0
        var dropped = 0
    }

    private init(profile: LinkProfile, seed: UInt64) {
        self.profile = profile
        down = LinkDirection(bitsPerSecond: profile.downBitsPerSecond, oneWay: profile.roundTrip / 2)
        up = LinkDirection(bitsPerSecond: profile.upBitsPerSecond, oneWay: profile.roundTrip / 2)
        state = Mutex(State(random: SplitMix(seed: seed)))
    }

    /// Starts a link to `127.0.0.1:upstreamPort`; `seed` decides which connections are dropped, and where.
    public static func start(upstreamPort: Int, profile: LinkProfile, seed: UInt64 = 1) async throws -> ShapedLink {
        let link = ShapedLink(profile: profile, seed: seed)
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { inbound in
                let cut = link.nextCut()
                // The handshake's round trip: nothing the client sends leaves before it is over.
                let opened = NIODeadline.now() + TimeAmount(profile.roundTrip)
                let toServer = LinkRelay(direction: link.up, notBefore: opened, cutAfter: nil)
                return inbound.pipeline.addHandler(toServer).flatMap {
                    ClientBootstrap(group: inbound.eventLoop)
                        .channelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
                        .channelInitializer { outbound in
                            outbound.pipeline.addHandler(LinkRelay(direction: link.down, notBefore: opened, cutAfter: cut, partner: inbound))
                        }
                        .connect(host: "127.0.0.1", port: upstreamPort)
                        .map { outbound in toServer.attach(outbound) }
                }
            }
        let channel = try await bootstrap.bind(host: "127.0.0.1", port: 0).get()
        link.listener.withLock { $0 = channel }
        link.state.withLock { $0.port = channel.localAddress?.port ?? 0 }
        return link
    }

    /// The port clients connect to.
    public var port: Int { state.withLock { $0.port } }
    /// `http://127.0.0.1:PORT`.
    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }
    /// Bytes carried from the server to its clients so far.
    public var bytesDown: Int64 { down.bytes }
    /// Bytes carried from the clients to the server so far.
    public var bytesUp: Int64 { up.bytes }
    /// Connections opened so far.
    public var connections: Int { state.withLock { $0.connections } }
    /// Connections dropped on purpose so far.
    public var droppedConnections: Int { state.withLock { $0.dropped } }

    /// Stops accepting connections (open ones finish).
    public func stop() async {
        let channel = listener.withLock { $0 }
        try? await channel?.close().get()
    }

    /// Where a new connection's answer is cut, or `nil` to carry it whole.
    private func nextCut() -> Int? {
        state.withLock { state in
            state.connections += 1
            guard profile.connectionLoss > 0, state.random.unit() < profile.connectionLoss else { return nil }
            state.dropped += 1
            return state.random.next(below: 64 * 1024)
        }
    }
}

/// One direction of the link: the time its wire is busy until, shared by every connection, and the bytes it carried.
final class LinkDirection: Sendable {
    private let bytesPerNanosecond: Double
    private let oneWay: TimeAmount
    private let state = Mutex<(busyUntil: NIODeadline, bytes: Int64)>((.uptimeNanoseconds(0), 0))

    init(bitsPerSecond: Double, oneWay: Duration) {
        bytesPerNanosecond = bitsPerSecond / 8 / 1e9
        self.oneWay = TimeAmount(oneWay)
    }

    var bytes: Int64 { state.withLock { $0.bytes } }

    /// When `count` bytes handed to the link now (not before `notBefore`) arrive at the other end: after the bytes
    /// queued before them have left, their own time on the wire, and half a round trip.
    func arrival(of count: Int, notBefore: NIODeadline) -> NIODeadline {
        state.withLock { state in
            let start = max(state.busyUntil, NIODeadline.now(), notBefore)
            state.busyUntil = start + .nanoseconds(Int64((Double(count) / bytesPerNanosecond).rounded(.up)))
            state.bytes += Int64(count)
            return state.busyUntil + oneWay
        }
    }
}

/// Carries one connection's bytes in one direction to its partner channel at the times the link gives them.
private final class LinkRelay: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer

    let direction: LinkDirection
    let notBefore: NIODeadline
    var cutAfter: Int?
    var partner: (any Channel)?
    private var carried = 0
    private var lastArrival = NIODeadline.uptimeNanoseconds(0)
    /// Bytes read before the partner connection was open: sent once it is.
    private var early: [ByteBuffer] = []

    init(direction: LinkDirection, notBefore: NIODeadline, cutAfter: Int?, partner: (any Channel)? = nil) {
        self.direction = direction
        self.notBefore = notBefore
        self.cutAfter = cutAfter
        self.partner = partner
    }

    /// Connects the partner (the upstream connection, once open) and sends what waited for it. Runs on the event loop.
    func attach(_ channel: any Channel) {
        partner = channel
        for buffer in early { forward(buffer, on: channel) }
        early.removeAll()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        guard let partner else {
            early.append(buffer)
            return
        }
        if let cut = cutAfter, carried + buffer.readableBytes > cut {
            // The link drops the connection here: what fits goes, then both ends are cut.
            if let slice = buffer.readSlice(length: max(0, cut - carried)), slice.readableBytes > 0 { forward(slice, on: partner) }
            let at = max(lastArrival, .now())
            partner.eventLoop.scheduleTask(deadline: at) { partner.close(promise: nil) }
            context.close(promise: nil)
            cutAfter = nil
            return
        }
        forward(buffer, on: partner)
    }

    private func forward(_ buffer: ByteBuffer, on partner: any Channel) {
        carried += buffer.readableBytes
        let arrival = direction.arrival(of: buffer.readableBytes, notBefore: notBefore)
        lastArrival = arrival
        partner.eventLoop.scheduleTask(deadline: arrival) { partner.writeAndFlush(buffer, promise: nil) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        // The other end learns of the close after the last bytes arrived.
        if let partner {
            partner.eventLoop.scheduleTask(deadline: max(lastArrival, .now())) { partner.close(promise: nil) }
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        partner?.close(promise: nil)
        context.close(promise: nil)
    }
}
