import CairnProtocol
import NIOCore

extension ChangesFeed {
    /// The page's JSON: `{"changes":[...],"cursor":...,"hasMore":...,"schemaVersion":...}` (with `"total"` on a
    /// snapshot's first page, and the `"schemaNumber"` the records are shaped for), each change written by
    /// the shape's writer (``Change/write(id:version:updatedAt:updatedBy:deleted:dataText:gone:into:)``) around the
    /// record's stored data text (never decoded): a live record, a tombstone, or `gone` when it no longer matches the
    /// filter.
    static func body(_ rows: FeedRows, cursor: FeedCursor, schemaVersion: String, total: Int? = nil, schemaNumber: Int? = nil) -> ByteBuffer {
        var size = 96 + schemaVersion.utf8.count
        for row in rows.rows { size += row.dataText.utf8.count + row.id.utf8.count + 120 }
        var buffer = ByteBuffer()
        buffer.reserveCapacity(size)
        buffer.writeStaticString("{\"changes\":[")
        // Each change goes through a small buffer that stays in cache, then into the page.
        var change: [UInt8] = []
        for (index, row) in rows.rows.enumerated() {
            if index > 0 { buffer.writeStaticString(",") }
            change.removeAll(keepingCapacity: true)
            writeChange(row, into: &change)
            buffer.writeBytes(change)
        }
        buffer.writeStaticString("],\"cursor\":")
        buffer.writeJSONString(cursor.token)
        buffer.writeStaticString(rows.hasMore ? ",\"hasMore\":true,\"schemaVersion\":" : ",\"hasMore\":false,\"schemaVersion\":")
        buffer.writeJSONString(schemaVersion)
        if let total {
            buffer.writeStaticString(",\"total\":")
            buffer.writeString(String(total))
        }
        if let schemaNumber {
            buffer.writeStaticString(",\"schemaNumber\":")
            buffer.writeString(String(schemaNumber))
        }
        buffer.writeStaticString("}")
        return buffer
    }

    /// One change object: a `gone` marker for a live record that left the filter, else the record's state.
    static func writeChange(_ row: FeedRow, into bytes: inout [UInt8]) {
        Change.write(
            id: row.id, version: row.version, updatedAt: row.updatedAt, updatedBy: row.updatedBy, deleted: row.deleted,
            dataText: row.dataText, gone: !row.deleted && !row.matchesFilter, into: &bytes)
    }
}

extension ByteBuffer {
    /// Writes `text` as a JSON string; text without quotes, backslashes or control characters is copied as is.
    mutating func writeJSONString(_ text: String) {
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }) {
            writeStaticString("\"")
            writeString(text)
            writeStaticString("\"")
        } else {
            var bytes: [UInt8] = []
            JSONValue.writeString(text, into: &bytes)
            writeBytes(bytes)
        }
    }
}
