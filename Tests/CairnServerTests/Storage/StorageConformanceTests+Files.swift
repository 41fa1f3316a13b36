import CairnProtocol
import CairnServer
import Foundation
import NIOCore
import Testing

/// The files catalog and the blob store of every backend.
@Suite("Storage conformance: files and their bytes")
struct FileStorageConformanceTests {
    static func file(_ id: String, size: Int64 = 10, status: FileStatus = .new, name: String = "a.jpg", tags: [String] = [], expires: Double? = nil)
        -> StoredFile
    {
        StoredFile(
            project: "field", id: id, name: name, contentType: "image/jpeg", size: size, sha256: nil, status: status, tags: tags,
            isPublic: false, createdAt: StorageFixtures.epoch, updatedAt: StorageFixtures.epoch, createdBy: "alice", attachTo: nil,
            attachedVersion: nil, expiresAt: expires.map(Date.init(timeIntervalSince1970:)))
    }

    @Test("the catalog: quotas hold under concurrent creations, status changes are compare-and-set, searches and sweeps", arguments: StorageBackend.all)
    func catalog(backend: StorageBackend) async throws {
        try await backend.withProjects { storage in
            // Ten creations of 30 bytes at once under a 100-byte quota: exactly three fit.
            let fitted = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<10 {
                    group.addTask { try await storage.insertFile(Self.file("q\(index)", size: 30), projectBytesLimit: 100) }
                }
                return try await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
            }
            #expect(fitted == 3)

            for (id, name, tags, expires) in [
                ("f-b", "Photo_1.JPG", ["site", "roof"], 100.0), ("f-a", "photo-2.jpg", ["site"], 50.0), ("f-c", "notes.txt", [], 900.0),
            ] {
                #expect(try await storage.insertFile(Self.file(id, name: name, tags: tags, expires: expires), projectBytesLimit: nil))
            }
            var done = try #require(try await storage.file(project: "field", id: "f-a"))
            done.status = .completed
            #expect(try await storage.replaceFile(done, ifStatus: .new))
            #expect(try await !storage.replaceFile(done, ifStatus: .new), "the status moved on: the swap fails")
            #expect(try await storage.file(id: "f-a")?.status == .completed)
            #expect(try await storage.completedFiles(project: "field", ids: ["f-a", "f-b", "nope"]) == ["f-a"])

            let ids = { (query: FileQuery) in try await storage.searchFiles(project: "field", query: query).map(\.id) }
            #expect(try await ids(FileQuery(statuses: [.new, .completed], namePattern: "photo%", limit: 10)) == ["f-a", "f-b"],
                    "LIKE folds ASCII case; ids in byte order")
            #expect(try await ids(FileQuery(statuses: [.new, .completed], namePattern: "photo_1%", limit: 10)) == ["f-b"])
            #expect(try await ids(FileQuery(statuses: [.completed], limit: 10)) == ["f-a"])
            #expect(try await ids(FileQuery(statuses: [.new, .completed], tags: ["site", "roof"], limit: 10)) == ["f-b"])
            let new = try await ids(FileQuery(statuses: [.new], limit: 100))
            #expect(new.count == 5 && new == new.sorted() && new.prefix(2) == ["f-b", "f-c"])
            #expect(try await ids(FileQuery(statuses: [.new], after: "f-b", limit: 2)) == Array(new.dropFirst().prefix(2)), "pages after an id")

            let expired = try await storage.expiredFiles(before: Date(timeIntervalSince1970: 500), limit: 10).map(\.id)
            #expect(expired == ["f-b"], "new files only, oldest first (f-a is completed)")
            #expect(try await storage.removeNewFile(project: "field", id: "f-b"))
            #expect(try await !storage.removeNewFile(project: "field", id: "f-a"), "a completed file is not removed")

            #expect(try await storage.fileLimits(project: "field") == FileLimits())
            try await storage.setFileLimits(project: "field", limits: FileLimits(maximumFileBytes: 5, maximumProjectBytes: nil))
            #expect(try await storage.fileLimits(project: "field") == FileLimits(maximumFileBytes: 5))
            #expect(await StorageFixtures.errorCode { try await storage.setFileLimits(project: "nope", limits: FileLimits()) } == .notFound)
        }
    }

    @Test("blobs: written in pieces, cut and resumed mid-chunk, read by any range; limits and breaks keep what arrived", arguments: StorageBackend.all)
    func blobs(backend: StorageBackend) async throws {
        try await backend.withBlobs { _, blobs in
            let bytes = (0..<5000).map { UInt8(truncatingIfNeeded: $0 * 7 + $0 / 251) }
            try await blobs.create(project: "field", id: "b1")
            #expect(try await blobs.size(project: "field", id: "b1") == 0)
            let first = try await blobs.write(project: "field", id: "b1", at: 0, limit: 5000, from: Self.pieces(bytes[0..<2345], size: 333))
            #expect(first == 2345)
            // Resumed from an offset inside a chunk, after cutting what followed it.
            let end = try await blobs.write(project: "field", id: "b1", at: 1500, limit: 5000, from: Self.pieces(bytes[1500..<5000], size: 777))
            #expect(end == 5000)
            for range in [0..<5000, 0..<1, 999..<1001, 1234..<4321, 4999..<5000] as [Range<Int64>] {
                var read: [UInt8] = []
                try await blobs.read(project: "field", id: "b1", range: range) { chunk in read += Array(buffer: chunk) }
                #expect(read == Array(bytes[Int(range.lowerBound)..<Int(range.upperBound)]), "\(range)")
            }

            try await blobs.create(project: "field", id: "b2")
            await #expect {
                try await blobs.write(project: "field", id: "b2", at: 0, limit: 1200, from: Self.pieces(bytes[0..<2000], size: 500))
            } throws: { error in
                if case BlobWriteError.limitExceeded(let kept) = error { return kept == 1200 }
                return false
            }
            #expect(try await blobs.size(project: "field", id: "b2") == 1200)

            struct Broken: Error {}
            let breaking = AsyncThrowingStream<ByteBuffer, any Error> { continuation in
                continuation.yield(ByteBuffer(bytes: bytes[0..<1100]))
                continuation.finish(throwing: Broken())
            }
            await #expect {
                try await blobs.write(project: "field", id: "b2", at: 0, limit: 5000, from: breaking)
            } throws: { error in
                if case BlobWriteError.interrupted(let kept, _) = error { return kept == 1100 }
                return false
            }
            #expect(try await blobs.size(project: "field", id: "b2") == 1100)

            try await blobs.remove(project: "field", id: "b1")
            #expect(try await blobs.size(project: "field", id: "b1") == 0)
        }
    }

    /// `bytes` in pieces of `size`.
    static func pieces(_ bytes: ArraySlice<UInt8>, size: Int) -> AsyncStream<ByteBuffer> {
        AsyncStream { continuation in
            var start = bytes.startIndex
            while start < bytes.endIndex {
                let end = min(start + size, bytes.endIndex)
                continuation.yield(ByteBuffer(bytes: bytes[start..<end]))
                start = end
            }
            continuation.finish()
        }
    }
}
