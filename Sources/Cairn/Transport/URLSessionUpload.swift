import Foundation

/// The body of a file upload as URLSession takes it: a file on disk it streams from, or (a slice of an encrypted
/// store's file, at most ``FileUploader/sealedSliceBytes``) the bytes decrypted in memory.
///
/// URLSession uploads whole files only, so a slice that is not its whole file (an upload resumed after an offset) is
/// first copied, chunk by chunk, to a temporary file, removed when the request ends.
enum URLSessionUpload: Sendable {
    /// The slice decrypted in memory.
    case memory(Data)
    /// A file to stream the body from; `temporary` when it is a copy of the slice, to remove after the request.
    case file(URL, temporary: Bool)

    /// The upload of `slice`, or nil when the request has no file body.
    init?(_ slice: TransportFileSlice?) throws {
        guard let slice else { return nil }
        if slice.sealing != nil {
            var body = Data(capacity: Int(slice.length))
            let reader = try slice.reader()
            while let chunk = try reader.next(upTo: 256 * 1024) { body.append(chunk) }
            self = .memory(body)
            return
        }
        let reader = try slice.reader()
        let size = (try? FileManager.default.attributesOfItem(atPath: slice.url.path)[.size] as? NSNumber)?.int64Value
        if slice.offset == 0, size == slice.length {
            self = .file(slice.url, temporary: false)
            return
        }
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("cairn-upload-\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: copy.path, contents: nil) else {
            throw CairnError(.invalidArgument, "A temporary copy of \(slice.url.lastPathComponent) could not be made")
        }
        do {
            let handle = try FileHandle(forWritingTo: copy)
            defer { try? handle.close() }
            while let chunk = try reader.next(upTo: 256 * 1024) { try handle.write(contentsOf: chunk) }
        } catch {
            try? FileManager.default.removeItem(at: copy)
            throw error
        }
        self = .file(copy, temporary: true)
    }

    /// Removes the temporary copy, if there is one.
    func remove() {
        if case .file(let url, temporary: true) = self { try? FileManager.default.removeItem(at: url) }
    }
}
