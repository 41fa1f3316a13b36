import CairnProtocol
import Foundation
import GRDB
import NIOCore
import _NIOFileSystem

/// Tells the errors that mean "the disk is full" from the others, whichever layer threw them: SQLite's
/// `SQLITE_FULL`, and `ENOSPC` or `EDQUOT` from a file write (NIO's file system; Foundation and POSIX through
/// ``DiskFull``).
///
/// ```swift
/// if OutOfSpace.matches(error) { /* 507 storage_full */ }
/// ```
enum OutOfSpace {
    /// Whether `error` says there is no room left to write.
    static func matches(_ error: any Error) -> Bool {
        switch error {
        case let error as DatabaseError:
            return error.resultCode == .SQLITE_FULL
        case let error as FileSystemError:
            if let cause = error.cause as? FileSystemError.SystemCallError { return DiskFull.isNoSpace(cause.errno.rawValue) }
            return error.cause.map(matches) ?? false
        case let error as IOError:
            return DiskFull.isNoSpace(error.errnoCode)
        case let error as BlobWriteError:
            if case .interrupted(_, let underlying) = error { return matches(underlying) }
            return false
        default:
            return DiskFull.matches(error)
        }
    }
}
