import CairnProtocol
import Foundation
import Hummingbird
import NIOCore

extension SyncServer {
    func addMetaRoutes(to router: Router<CairnRequestContext>) {
        router.get("health") { _, _ in
            try Response.json(["status": "ok", "protocol": "1"] as [String: String])
        }
        router.get("v1/openapi.json") { _, _ in
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
