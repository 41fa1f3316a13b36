/// How ``CairnConfiguration/traceRequests`` writes each request.
///
/// ```swift
/// configuration.traceRequests = true
/// configuration.traceWithData = true
/// configuration.traceFormat = .pretty   // one readable block per request, bodies indented
/// ```
public enum TraceFormat: String, Sendable, Codable, CaseIterable {
    /// One line per request: the message `request` (or `request failed`) with the facts as metadata
    /// (`cairn.method`, `cairn.path`, `cairn.status`, `cairn.ms`, sizes; with data, `cairn.query`, `cairn.request`,
    /// `cairn.response`). For log handlers that index metadata. The default.
    case compact
    /// A block a person reads in a console: a first line `POST /v1/… → 200 in 12 ms, 340 B sent, 1.2 KB received`,
    /// then, with ``CairnConfiguration/traceWithData``, the query and each JSON body indented with sorted keys
    /// (gzip bodies decompressed). The same metadata as ``compact``, less the bodies.
    case pretty
}
