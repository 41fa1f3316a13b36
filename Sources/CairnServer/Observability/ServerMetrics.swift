import CairnProtocol
import CoreMetrics
import Foundation
import Prometheus

/// What a server counts, through swift-metrics, into a Prometheus registry of its own (so several servers in one
/// process, as in tests, keep apart). `GET /metrics` answers the registry in Prometheus' text format.
///
/// | metric | kind | labels |
/// | --- | --- | --- |
/// | `cairn_http_requests_total` | counter | `method`, `route`, `status` |
/// | `cairn_http_request_duration_seconds` | histogram | `method`, `route` |
/// | `cairn_pushed_operations_total` | counter | `result` (applied, conflict, rejected) |
/// | `cairn_pulled_records_total` | counter | |
/// | `cairn_conflicts_total` | counter | |
/// | `cairn_sse_connections` | gauge | |
/// | `cairn_file_bytes_total` | counter | `direction` (in, out) |
/// | `cairn_webhook_deliveries_total` | counter | `result` (delivered: changes accepted; failed: attempts) |
/// | `cairn_webhooks_failing` | gauge | (webhooks failing for longer than ``WebhookSettings/failingAfter``) |
/// | `cairn_storage_connections_in_use`, `cairn_storage_connections_max` | gauge | (PostgreSQL only) |
/// | `cairn_storage_full_refusals_total` | counter | (writes refused because the storage is full) |
/// | `cairn_storage_full` | gauge | (1 while the storage is full, ``StorageSpaceMonitor``) |
///
/// Routes are the matched patterns (`/v1/projects/:project/batch`), never raw paths, so that labels stay few.
final class ServerMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    private let factory: PrometheusMetricsFactory
    private let pulled: CoreMetrics.Counter
    private let conflicts: CoreMetrics.Counter
    private let sse: CoreMetrics.Meter
    private let bytesIn: CoreMetrics.Counter
    private let bytesOut: CoreMetrics.Counter

    init() {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .milliseconds(1), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
            .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5), .seconds(10),
        ]
        self.factory = factory
        pulled = CoreMetrics.Counter(label: "cairn_pulled_records_total", factory: factory)
        conflicts = CoreMetrics.Counter(label: "cairn_conflicts_total", factory: factory)
        sse = CoreMetrics.Meter(label: "cairn_sse_connections", factory: factory)
        bytesIn = CoreMetrics.Counter(label: "cairn_file_bytes_total", dimensions: [("direction", "in")], factory: factory)
        bytesOut = CoreMetrics.Counter(label: "cairn_file_bytes_total", dimensions: [("direction", "out")], factory: factory)
    }

    /// One answered request, by its route pattern.
    func request(method: String, route: String, status: Int, duration: Duration) {
        CoreMetrics.Counter(label: "cairn_http_requests_total", dimensions: [("method", method), ("route", route), ("status", String(status))], factory: factory)
            .increment()
        CoreMetrics.Timer(label: "cairn_http_request_duration_seconds", dimensions: [("method", method), ("route", route)], factory: factory)
            .recordNanoseconds(duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
    }

    /// A batch's results, counted by status; conflicts also on their own.
    func pushed(_ results: [OperationResult]) {
        var counts: [OperationStatus: Int] = [:]
        for result in results { counts[result.status, default: 0] += 1 }
        for (status, count) in counts {
            CoreMetrics.Counter(label: "cairn_pushed_operations_total", dimensions: [("result", status.rawValue)], factory: factory).increment(by: count)
        }
        if let conflicted = counts[.conflict] { conflicts.increment(by: conflicted) }
    }

    /// A batch that decided before the project's write lock found, under it, that a record or opId it read had changed,
    /// and decided again (`cairn_batches_decided_again_total`).
    func batchDecidedAgain() {
        CoreMetrics.Counter(label: "cairn_batches_decided_again_total", factory: factory).increment()
    }

    /// Records handed out by a page of the feed.
    func pulled(_ count: Int) { if count > 0 { pulled.increment(by: count) } }

    /// An event stream opened (+1) or closed (-1).
    func eventStreams(_ change: Int) { change > 0 ? sse.increment(by: Double(change)) : sse.decrement(by: Double(-change)) }

    /// File bytes received (`in`) or sent (`out`).
    func fileBytes(in count: Int64) { if count > 0 { bytesIn.increment(by: count) } }
    func fileBytes(out count: Int64) { if count > 0 { bytesOut.increment(by: count) } }

    /// Changes a webhook's receiver accepted.
    func webhookDelivered(_ count: Int) {
        if count > 0 {
            CoreMetrics.Counter(label: "cairn_webhook_deliveries_total", dimensions: [("result", "delivered")], factory: factory).increment(by: count)
        }
    }

    /// A delivery attempt that failed.
    func webhookFailed() {
        CoreMetrics.Counter(label: "cairn_webhook_deliveries_total", dimensions: [("result", "failed")], factory: factory).increment()
    }

    /// How many webhooks are marked `failing` now.
    func webhooksFailing(_ count: Int) {
        CoreMetrics.Gauge(label: "cairn_webhooks_failing", factory: factory).record(count)
    }

    /// The storage's pool, read at each scrape.
    func pool(_ usage: PoolUsage?) {
        guard let usage else { return }
        CoreMetrics.Gauge(label: "cairn_storage_connections_in_use", factory: factory).record(usage.inUse)
        CoreMetrics.Gauge(label: "cairn_storage_connections_max", factory: factory).record(usage.maximum)
    }

    /// Writes refused for lack of space, and whether the storage is full now.
    func storageFull(refused: Int, full: Bool) {
        if refused > 0 { CoreMetrics.Counter(label: "cairn_storage_full_refusals_total", factory: factory).increment(by: refused) }
        CoreMetrics.Gauge(label: "cairn_storage_full", factory: factory).record(full ? 1 : 0)
    }

    /// The registry in Prometheus' text format.
    func text() -> [UInt8] { registry.emitToBuffer() }
}
