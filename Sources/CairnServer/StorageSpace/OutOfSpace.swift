import Foundation
import GRDB
import NIOCore
import _NIOFileSystem

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Tells the errors that mean "the disk is full" from the others, whichever layer threw them: SQLite's
/// `SQLITE_FULL`, and `ENOSPC` or `EDQUOT` from a file write (NIO's file system, Foundation, POSIX).
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
            if let cause = error.cause as? FileSystemError.SystemCallError { return isNoSpace(cause.errno.rawValue) }
            return error.cause.map(matches) ?? false
        case let error as IOError:
            return isNoSpace(error.errnoCode)
        case let error as POSIXError:
            return isNoSpace(error.code.rawValue)
        case let error as CocoaError:
            if error.code == .fileWriteOutOfSpace { return true }
            return (error.userInfo[NSUnderlyingErrorKey] as? any Error).map(matches) ?? false
        case let error as BlobWriteError:
            if case .interrupted(_, let underlying) = error { return matches(underlying) }
            return false
        default:
            let bridged = error as NSError
            if bridged.domain == NSPOSIXErrorDomain { return isNoSpace(Int32(bridged.code)) }
            return false
        }
    }

    private static func isNoSpace(_ code: Int32) -> Bool { code == ENOSPC || code == EDQUOT }
}
