import CairnProtocol
import Foundation
import Hummingbird
import NIOCore

/// `GET /health` and `GET /v1/openapi.json`, without a token. Mounted at the root.
struct MetaRoutes: RouteGroup {
    func add(to routes: RouteCollection<CairnRequestContext>) {
        routes.get("health") { _, _ in
            try Response.json(["status": "ok", "protocol": "1"] as [String: String])
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
