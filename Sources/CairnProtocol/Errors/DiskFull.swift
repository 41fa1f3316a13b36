import Foundation

/// Whether a file write failed because the disk is full (`ENOSPC`) or the user's quota is spent (`EDQUOT`), as
/// Foundation and POSIX report it. The SDK answers such a failure with `storage_full`, the server with `507`.
///
/// ```swift
/// if DiskFull.matches(error) { throw CairnError(.storageFull, "The device is out of space") }
/// ```
public enum DiskFull {
    /// Whether `error` (a `CocoaError`, a `POSIXError`, an `NSError` of the POSIX domain, or one of those underneath a
    /// `CocoaError`) says there is no room left.
    public static func matches(_ error: any Error) -> Bool {
        switch error {
        case let error as CocoaError:
            if error.code == .fileWriteOutOfSpace { return true }
            return (error.userInfo[NSUnderlyingErrorKey] as? any Error).map(matches) ?? false
        case let error as POSIXError:
            return isNoSpace(error.code.rawValue)
        default:
            let bridged = error as NSError
            return bridged.domain == NSPOSIXErrorDomain && isNoSpace(Int32(bridged.code))
        }
    }

    /// Whether a POSIX error number means no room: `ENOSPC` or `EDQUOT`.
    public static func isNoSpace(_ code: Int32) -> Bool {
        code == POSIXErrorCode.ENOSPC.rawValue || code == POSIXErrorCode.EDQUOT.rawValue
    }
}
