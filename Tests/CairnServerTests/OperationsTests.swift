import CairnProtocol
import CairnServer
import CairnTesting
import Foundation
import Testing

/// What operators read: readiness and Prometheus metrics.
@Suite("Readiness and metrics")
struct OperationsTests {
    @Test("/ready answers ready while the storage serves")
    func ready() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let reply = try await fixture.http.send(.GET, "/ready")
            #expect(reply.status == 200)
            #expect(reply.json?["status"] == "ready")
        }
    }

    @Test("/metrics counts requests by route, pushed operations by result, conflicts, pulled records, live streams and file bytes")
    func metrics() async throws {
        let fixture = try await Fixture.start()
        try await withCleanup({ await fixture.stop() }) {
            let created = try await fixture.push("alice", [SyncOperation(opId: newOpID(), collection: "tasks", id: "t1", op: .create, data: ["title": "a"])])
            let version = try #require(created.first?.record?.version)
            _ = try await fixture.push("alice", [SyncOperation(opId: newOpID(), collection: "tasks", id: "t1", op: .update, baseVersion: version, data: ["title": "b"])])
            // A second writer on the old version: `tasks` rejects it as a conflict.
            _ = try await fixture.push("bob", [SyncOperation(opId: newOpID(), collection: "tasks", id: "t1", op: .update, baseVersion: version, data: ["title": "c"])])
            _ = try await fixture.pull("rita", "tasks")
            let stream = try await EventStreamReader.open(
                url: fixture.server.baseURL.appendingPathComponent("v1/projects/field/events"), token: fixture.tokens["rita"]!)
            try await withCleanup({ await stream.close() }) {
                _ = try await fixture.upload(Data(repeating: 7, count: 1000))
                try await Task.sleep(for: .milliseconds(200))

                let reply = try await fixture.http.send(.GET, "/metrics")
                #expect(reply.status == 200)
                #expect(reply.header("Content-Type")?.hasPrefix("text/plain") == true)
                let text = String(decoding: reply.body, as: UTF8.self)
                let lines = Set(text.split(separator: "\n").map(String.init))
                #expect(lines.contains(#"cairn_http_requests_total{method="POST",route="/v1/projects/{project}/batch",status="200"} 3"#), "\(text)")
                #expect(lines.contains(#"cairn_pushed_operations_total{result="applied"} 2"#))
                #expect(lines.contains(#"cairn_pushed_operations_total{result="conflict"} 1"#))
                #expect(lines.contains("cairn_conflicts_total 1"))
                #expect(lines.contains("cairn_pulled_records_total 1"))
                #expect(lines.contains("cairn_sse_connections 1.0"))
                #expect(lines.contains(#"cairn_file_bytes_total{direction="in"} 1000"#))
                #expect(text.contains(#"cairn_http_request_duration_seconds_count{method="GET",route="/v1/projects/{project}/collections/{collection}/changes"} 1"#))
            }
        }
    }
}
