import Foundation
import NIOCore
import NIOPosix
import Synchronization

/// A TCP proxy on a free loopback port that forwards to a server and breaks connections on purpose: it cuts a
/// request part-way, or lets the server answer and then drops the answer (whole or part-way), or never answers.
///
/// ```swift
/// let proxy = try await FaultProxy.start(upstreamPort: server.port, faultRate: 0.3, seed: 42)
/// // point clients at proxy.baseURL ...
/// proxy.faultRate = 0      // heal the network
/// ```
public final class FaultProxy: Sendable {
    /// What happens to one connection.
    public enum Fault: Sendable, Equatable {
        case none
        /// Forward this many request bytes, then cut the connection.
        case cutRequest(after: Int)
        /// Forward the whole request, let the server answer, forward this many answer bytes, then cut.
        case cutResponse(after: Int)
        /// Accept, read, never answer.
        case blackhole
    }

    private struct Plan {
        var rate: Double
        var blackholes: Bool
        var random: SplitMix
        var faults: [Fault] = []
        var connections = 0
        var scripted: [Fault] = []
    }

    private let plan: Mutex<Plan>
    private let channel: Mutex<(any Channel)?> = Mutex(nil)
    /// The port clients connect to.
    public private(set) var port: Int {
        get { portValue.withLock { $0 } }
        set { portValue.withLock { $0 = newValue } }
    }
    private let portValue = Mutex(0)

    private init(rate: Double, seed: UInt64, blackholes: Bool) {
        plan = Mutex(Plan(rate: rate, blackholes: blackholes, random: SplitMix(seed: seed)))
    }

    /// `http://127.0.0.1:PORT`.
    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// The share of new connections that get a fault (0...1).
    public var faultRate: Double {
        get { plan.withLock { $0.rate } }
        set { plan.withLock { $0.rate = newValue } }
    }

    /// The faults injected so far.
    public var injected: [Fault] { plan.withLock { $0.faults } }

    /// Gives the next connections these faults, in order, before the fault rate applies again: a test that cuts
    /// a large upload at chosen points (`.cutRequest(after: 50 << 20)`).
    public func script(_ faults: [Fault]) { plan.withLock { $0.scripted += faults } }

    /// Connections accepted so far.
    public var connections: Int { plan.withLock { $0.connections } }

    /// Starts a proxy to `127.0.0.1:upstreamPort`. With `blackholes`, every fault is a connection never answered.
    public static func start(upstreamPort: Int, faultRate: Double, seed: UInt64, blackholes: Bool = false) async throws -> FaultProxy {
        let proxy = FaultProxy(rate: faultRate, seed: seed, blackholes: blackholes)
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { inbound in
                let fault = proxy.nextFault()
                let toServer = Relay(budget: fault.requestBudget)
                if case .blackhole = fault {
                    return inbound.pipeline.addHandler(Sink())
                }
                return inbound.pipeline.addHandler(toServer).flatMap {
                    ClientBootstrap(group: inbound.eventLoop)
                        .channelInitializer { outbound in
                            outbound.pipeline.addHandler(Relay(budget: fault.responseBudget, partner: inbound))
                        }
                        .connect(host: "127.0.0.1", port: upstreamPort)
                        .map { outbound in toServer.partner = outbound }
                }
            }
        let channel = try await bootstrap.bind(host: "127.0.0.1", port: 0).get()
        proxy.channel.withLock { $0 = channel }
        proxy.port = channel.localAddress?.port ?? 0
        return proxy
    }

    /// Stops accepting connections.
    public func stop() async {
        let channel = self.channel.withLock { $0 }
        try? await channel?.close().get()
    }

    private func nextFault() -> Fault {
        plan.withLock { plan in
            plan.connections += 1
            if !plan.scripted.isEmpty {
                let fault = plan.scripted.removeFirst()
                if fault != .none { plan.faults.append(fault) }
                return fault
            }
            guard plan.random.unit() < plan.rate else { return .none }
            if plan.blackholes {
                plan.faults.append(.blackhole)
                return .blackhole
            }
            let fault: Fault
            switch plan.random.next() % 3 {
            case 0: fault = .cutRequest(after: Int(plan.random.next() % 600))
            case 1: fault = .cutResponse(after: 0)
            case 2: fault = .cutResponse(after: Int(plan.random.next() % 4000))
            default: fault = .cutResponse(after: Int(plan.random.next() % 4000))
            }
            plan.faults.append(fault)
            return fault
        }
    }
}

extension FaultProxy.Fault {
    var requestBudget: Int? {
        if case .cutRequest(let after) = self { return after }
        return nil
    }

    var responseBudget: Int? {
        if case .cutResponse(let after) = self { return after }
        return nil
    }
}

/// Forwards bytes to its partner channel, cutting both after `budget` bytes when it has one.
private final class Relay: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    var partner: (any Channel)?
    var budget: Int?
    private var forwarded = 0

    init(budget: Int?, partner: (any Channel)? = nil) {
        self.budget = budget
        self.partner = partner
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        guard let partner else { return }
        if let budget, forwarded + buffer.readableBytes > budget {
            let allowed = max(0, budget - forwarded)
            if allowed > 0, let slice = buffer.readSlice(length: allowed) {
                partner.writeAndFlush(slice, promise: nil)
            }
            forwarded = budget
            partner.close(promise: nil)
            context.close(promise: nil)
            return
        }
        forwarded += buffer.readableBytes
        partner.writeAndFlush(buffer, promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        partner?.close(promise: nil)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        partner?.close(promise: nil)
        context.close(promise: nil)
    }
}

/// Reads and discards: a server that never answers.
private final class Sink: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}
}
