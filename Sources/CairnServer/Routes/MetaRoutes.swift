import CairnProtocol
import Foundation
import Hummingbird
import NIOCore

/// `GET /health` (the process answers, with its protocol and release), `GET /ready` (and its storage can serve),
/// `GET /metrics` (Prometheus text; see ``ServerMetrics``) and `GET /v1/openapi.json`, without a token. Mounted at the
/// root.
struct MetaRoutes: RouteGroup {
    let storage: any ServerStorage
    let metrics: ServerMetrics
    let space: StorageSpaceMonitor

    func add(to routes: RouteCollection<CairnRequestContext>) {
        routes.get("health") { _, _ in
            try Response.json(ServerHealth())
        }
        routes.get("ready") { _, _ in
            if let reason = await space.fullReason() {
                throw APIError(
                    .serviceUnavailable, .storageFull, "The server's storage is full: \(reason)", headers: [.retryAfter: "30"])
            }
            do {
                try await storage.checkReady()
            } catch {
                let reason = (error as? ErrorBody)?.message ?? storage.describe(error)
                throw APIError(.serviceUnavailable, .unavailable, "The server cannot serve yet: \(reason)", headers: [.retryAfter: "5"])
            }
            return try Response.json(["status": "ready", "protocol": CairnVersion.protocolVersion] as [String: String])
        }
        routes.get("metrics") { _, _ in
            metrics.pool(storage.poolUsage)
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: metrics.text())))
        }
        routes.get("v1/openapi.json") { _, _ in
            Response.jsonBytes(ByteBuffer(bytes: OpenAPIDocument.bytes))
        }
    }
}

/// The OpenAPI 3.1 description of PROTOCOL.md, shipped as a resource of this module.
enum OpenAPIDocument {
    static let bytes: Data = {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "json"),
            let data = try? Data(contentsOf: url)
        else { return Data("{}".utf8) }
        return data
    }()
}
