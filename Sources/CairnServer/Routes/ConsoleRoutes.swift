import CairnProtocol
import HTTPTypes
import Hummingbird
import NIOCore

/// `GET /console/` and `GET /console/{file}`: the operators' console (``ConsoleFiles``), without a token (its pages
/// sign in and call the documented routes themselves). Every file is answered with a strict Content-Security-Policy
/// (no inline script or style, nothing from other origins, no framing), `nosniff`, no referrer, and an ETag the
/// browser revalidates with. Mounted at the root.
struct ConsoleRoutes: RouteGroup {
    let files: ConsoleFiles

    /// The policy every console file is served with.
    static let contentSecurityPolicy =
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
        + "frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

    func add(to routes: RouteCollection<CairnRequestContext>) {
        routes.get("console") { request, _ in
            // `/console` and `/console/` both lead to the console's page; without the slash, through a redirect, so
            // that the browser's base is the console's folder.
            guard request.uri.path.hasSuffix("/") else {
                return Response(status: .movedPermanently, headers: [.location: "/console/"])
            }
            return try serve("index.html", request)
        }
        routes.get("console/:file") { request, context in
            try serve(context.parameters.get("file") ?? "", request)
        }
    }

    /// The file called `name`, or `404 not_found`; `304` when the browser's copy is current.
    func serve(_ name: String, _ request: Request) throws -> Response {
        guard let file = files.file(named: name.isEmpty ? "index.html" : name) else { throw ErrorBody.notFound("console file") }
        var headers: HTTPFields = [
            .contentType: file.contentType,
            .eTag: file.etag,
            // The browser keeps a copy but asks each time whether it is current (a new release changes the ETag).
            .cacheControl: "no-cache",
            .contentSecurityPolicy: Self.contentSecurityPolicy,
            .xContentTypeOptions: "nosniff",
            .referrerPolicy: "no-referrer",
        ]
        if request.ifNoneMatch(file.etag) {
            headers[.contentType] = nil
            return Response(status: .notModified, headers: headers)
        }
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: file.bytes)))
    }
}
