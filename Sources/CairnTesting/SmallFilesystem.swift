import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A real filesystem of a few megabytes (a `tmpfs` mounted for the test), to fill on purpose: the full-disk tests run
/// a server or a store on one. Mounting needs the right to mount (root in a container that allows it); without it,
/// ``mount(megabytes:for:)`` prints why and returns `nil`, and the test skips.
///
/// ```swift
/// guard let disk = SmallFilesystem.mount(megabytes: 16, for: "the full-disk tests") else { return }
/// defer { disk.unmount() }
/// try disk.fill(leaving: 0)   // writes a filler file until the disk is full; `free()` removes it
/// ```
public final class SmallFilesystem: Sendable {
    /// Where it is mounted.
    public let url: URL
    /// The file that takes the room ``fill(leaving:)`` took.
    private var filler: URL { url.appendingPathComponent("filler") }

    private init(url: URL) { self.url = url }

    /// Mounts a `tmpfs` of `megabytes` under the tests' scratch folder; `nil`, with the reason printed, where mounting
    /// is not allowed or not available.
    public static func mount(megabytes: Int, for purpose: String) -> SmallFilesystem? {
        #if os(Linux)
        let url = TestScratch.url("cairn-small-disk")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        guard Glibc.mount("tmpfs", url.path, "tmpfs", 0, "size=\(megabytes)m,mode=0700") == 0 else {
            let reason = String(cString: strerror(errno))
            print("skipping \(purpose): cannot mount a \(megabytes) MB tmpfs here (\(reason)); run as root where mounting is allowed")
            try? FileManager.default.removeItem(at: url)
            return nil
        }
        return SmallFilesystem(url: url)
        #else
        print("skipping \(purpose): mounting a small filesystem is done on Linux only")
        return nil
        #endif
    }

    /// The bytes still free.
    public var freeBytes: Int64 {
        var stats = statvfs()
        guard statvfs(url.path, &stats) == 0 else { return 0 }
        return Int64(stats.f_bavail) * Int64(stats.f_frsize)
    }

    /// Writes a filler file until at most `bytes` are left free (0: the disk is full).
    public func fill(leaving bytes: Int64 = 0) throws {
        if !FileManager.default.fileExists(atPath: filler.path) { _ = FileManager.default.createFile(atPath: filler.path, contents: nil) }
        let handle = try FileHandle(forWritingTo: filler)
        defer { try? handle.close() }
        try handle.seekToEnd()
        let block = Data(count: 64 * 1024)
        while freeBytes > bytes {
            let size = Int(min(Int64(block.count), max(freeBytes - bytes, 4096)))
            do { try handle.write(contentsOf: block.prefix(size)) } catch { break }
        }
        try? handle.synchronize()
    }

    /// Removes the filler: the room it took is free again.
    public func free() {
        try? FileManager.default.removeItem(at: filler)
    }

    /// Mounts it again read-only (`true`: every write fails with `EROFS`, even root's) or writable. Files open for
    /// writing on it must be closed first.
    public func setReadOnly(_ readOnly: Bool) throws {
        #if os(Linux)
        let flags = UInt(MS_REMOUNT) | (readOnly ? UInt(MS_RDONLY) : 0)
        guard Glibc.mount("tmpfs", url.path, "tmpfs", flags, nil) == 0 else {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        #endif
    }

    /// Unmounts it (lazily, should a file still be open) and removes the mount point.
    public func unmount() {
        #if os(Linux)
        _ = umount2(url.path, Int32(MNT_DETACH))
        #endif
        try? FileManager.default.removeItem(at: url)
    }
}
