import CairnProtocol
import Foundation
import NIOCore
import Testing

@testable import CairnServer

/// The changes feed's rules as pure functions: the cursor after a page, and the page's wire bytes.
@Suite("Feed rules without I/O")
struct FeedRulesTests {
    func rows(_ versions: [Int64], hasMore: Bool, head: Int64) -> FeedRows {
        FeedRows(
            rows: versions.map {
                FeedRow(id: "r\($0)", version: $0, updatedAt: "2027-01-15T08:00:00Z", updatedBy: "alice", deleted: false,
                        dataText: "{}", matchesFilter: true)
            },
            hasMore: hasMore, purgedThrough: 0, head: head)
    }

    @Test("a snapshot pins its high mark at the head its first page read, keeps it until passed, and ends at the head")
    func cursorAfterPage() {
        let start = FeedCursor(since: 0, snapshotHigh: Int64.max)
        #expect(FeedCursor.after(start, rows: rows([3, 7], hasMore: true, head: 50)) == FeedCursor(since: 7, snapshotHigh: 50))
        #expect(FeedCursor.after(FeedCursor(since: 7, snapshotHigh: 50), rows: rows([49, 51], hasMore: true, head: 60))
            == FeedCursor(since: 51, snapshotHigh: nil))
        #expect(FeedCursor.after(FeedCursor(since: 7, snapshotHigh: 50), rows: rows([9], hasMore: false, head: 60))
            == FeedCursor(since: 60, snapshotHigh: nil))
        // An empty delta moves to the head: every later change is above it.
        #expect(FeedCursor.after(FeedCursor(since: 12, snapshotHigh: nil), rows: rows([], hasMore: false, head: 12))
            == FeedCursor(since: 12, snapshotHigh: nil))
        #expect(FeedCursor.after(start, rows: rows([], hasMore: false, head: 0)) == FeedCursor(since: 0, snapshotHigh: nil))
    }

    @Test("a page's bytes: live records around their stored data, tombstones, gone, then cursor, hasMore and schema version")
    func pageBytes() {
        let page = FeedRows(rows: [
            FeedRow(id: "a", version: 1, updatedAt: "2027-01-15T08:00:00Z", updatedBy: "alice", deleted: false,
                    dataText: #"{"title":"x \"y\""}"#, matchesFilter: true),
            FeedRow(id: "b", version: 2, updatedAt: "2027-01-15T08:00:01Z", updatedBy: "bob", deleted: true, dataText: "{}", matchesFilter: false),
            FeedRow(id: "c", version: 3, updatedAt: "2027-01-15T08:00:02Z", updatedBy: "bob", deleted: false,
                    dataText: #"{"done":true}"#, matchesFilter: false),
            FeedRow(id: "q\"", version: 4, updatedAt: "2027-01-15T08:00:03Z", updatedBy: "u\\", deleted: true, dataText: "{}", matchesFilter: true),
        ], hasMore: true, purgedThrough: 0, head: 9)
        let cursor = FeedCursor(since: 3, snapshotHigh: 9)
        let body = ChangesFeed.body(page, cursor: cursor, schemaVersion: "abc")
        let expected = #"{"changes":[{"id":"a","version":1,"updatedAt":"2027-01-15T08:00:00Z","updatedBy":"alice","deleted":false,"data":{"title":"x \"y\""}},"#
            + #"{"id":"b","version":2,"updatedAt":"2027-01-15T08:00:01Z","updatedBy":"bob","deleted":true},"#
            + #"{"id":"c","version":3,"gone":true},"#
            + #"{"id":"q\"","version":4,"updatedAt":"2027-01-15T08:00:03Z","updatedBy":"u\\","deleted":true}],"#
            + #""cursor":""# + cursor.token + #"","hasMore":true,"schemaVersion":"abc"}"#
        #expect(String(buffer: body) == expected)
        let decoded = try? CairnJSON.decode(ChangesPage.self, from: Array(expected.utf8))
        #expect(decoded?.changes.map(\.id) == ["a", "b", "c", "q\""])
        #expect(decoded?.changes[2].gone == true)
    }
}

@Suite("Feed bytes: numbers")
struct FeedNumberTests {
    @Test("versions are written in decimal", arguments: [Int64(0), 7, 10, 99, 1042, -5, Int64.max, Int64.min])
    func decimal(value: Int64) {
        var bytes: [UInt8] = Array("x".utf8)
        bytes.appendDecimal(value)
        #expect(String(decoding: bytes.dropFirst(), as: UTF8.self) == String(value))
    }
}
