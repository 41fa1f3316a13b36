import CairnProtocol
import HTTPTypes

/// The paths and methods the OpenAPI document declares, so that a request for a declared path with another method
/// answers `405 method_not_allowed` with an `Allow` header, and the document stays the one list of routes.
///
/// ```swift
/// DeclaredRoutes.served.allowedMethods(for: "/v1/projects/field/schema")   // ["GET", "PUT"]
/// ```
struct DeclaredRoutes: Sendable {
    /// One declared path: its segments (`nil` for a `{parameter}`) and its methods, upper-cased and sorted.
    struct Route: Sendable {
        var segments: [String?]
        var methods: [String]
    }

    let routes: [Route]

    /// Reads the `paths` of an OpenAPI document.
    init(openAPI bytes: [UInt8]) {
        let verbs: Set<String> = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]
        let paths = (try? JSONValue(parsing: bytes))?.objectValue?["paths"]?.objectValue ?? [:]
        routes = paths.map { path, item in
            let segments = path.split(separator: "/").map { segment -> String? in
                segment.hasPrefix("{") && segment.hasSuffix("}") ? nil : String(segment)
            }
            let methods = (item.objectValue ?? [:]).keys.filter(verbs.contains).map { $0.uppercased() }.sorted()
            return Route(segments: segments, methods: methods)
        }
    }

    /// The routes of the document this server serves.
    static let served = DeclaredRoutes(openAPI: Array(OpenAPIDocument.bytes))

    /// The methods declared for `path`, or `nil` when no declared path matches it.
    func allowedMethods(for path: String) -> [String]? {
        let parts = path.split(separator: "/")
        let matching = routes.filter { route in
            route.segments.count == parts.count
                && zip(route.segments, parts).allSatisfy { expected, part in expected.map { $0 == part } ?? !part.isEmpty }
        }
        guard !matching.isEmpty else { return nil }
        return Array(Set(matching.flatMap(\.methods))).sorted()
    }
}
