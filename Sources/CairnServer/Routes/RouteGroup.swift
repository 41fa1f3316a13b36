import Hummingbird

/// A group of routes carrying its own dependencies, mounted on the server's router at a path.
///
/// ```swift
/// router.addRoutes(PublicFileRoutes(files: files).collection, atPath: "v1/public")
/// ```
protocol RouteGroup: Sendable {
    /// Adds the group's routes, relative to where it is mounted.
    func add(to routes: RouteCollection<CairnRequestContext>)
}

extension RouteGroup {
    /// The group's routes, ready to mount.
    var collection: RouteCollection<CairnRequestContext> {
        let routes = RouteCollection(context: CairnRequestContext.self)
        add(to: routes)
        return routes
    }
}
