import CairnProtocol
import Foundation
import GRDB

/// Every error the Cairn SDK throws: a stable ``code`` (shared with the server's wire codes where one applies),
/// a message that says what to do, the server's ``details``, the underlying ``cause``, and whether retrying can help.
///
/// Its description never contains record data or tokens.
///
/// ```swift
/// do {
///     try await client.sync()
/// } catch let error as CairnError where error.code == .validationFailed {
///     print(error.details?["field"] ?? "")   // the field the server refused
/// } catch let error as CairnError where error.isRetryable {
///     // offline or the server is busy: the changes stay queued
/// }
/// ```
public struct CairnError: Error, Sendable, CustomStringConvertible {
    /// The stable code: a wire code such as ``ErrorCode/conflict``, or an SDK code such as ``ErrorCode/networkUnavailable``.
    public var code: ErrorCode
    /// What went wrong and what to do about it.
    public var message: String
    /// Machine-readable context, such as the `field` the server refused; the wire error's `details` when the server
    /// answered with one.
    public var details: [String: JSONValue]?
    /// The HTTP status, when the server answered with an error.
    public var httpStatus: Int?
    /// True when the same call may succeed later (network failures, timeouts, 5xx, 429).
    public var isRetryable: Bool
    /// The error that caused this one, if any.
    public var cause: (any Error)?
    /// False when retrying the same request at once is pointless even though a later sync may succeed (a connection
    /// attempt that already waited out its whole timeout).
    var retriesInPlace: Bool
    /// True when the server's host refused the connection (nothing listens there): the retry policy's
    /// ``RetryPolicy/maximumRefusedAttempts`` apply.
    var connectionRefused = false

    /// An error with a code and a message that says what to do.
    public init(
        _ code: ErrorCode, _ message: String, details: [String: JSONValue]? = nil, httpStatus: Int? = nil, isRetryable: Bool = false,
        cause: (any Error)? = nil
    ) {
        self.init(code, message, details: details, httpStatus: httpStatus, isRetryable: isRetryable, cause: cause, retriesInPlace: true)
    }

    init(
        _ code: ErrorCode, _ message: String, details: [String: JSONValue]? = nil, httpStatus: Int? = nil, isRetryable: Bool = false,
        cause: (any Error)? = nil, retriesInPlace: Bool
    ) {
        self.code = code
        self.message = message
        self.details = details
        self.httpStatus = httpStatus
        self.isRetryable = isRetryable
        self.cause = cause
        self.retriesInPlace = retriesInPlace
    }

    /// `CairnError(code, HTTP status): message`, with the names of the details' keys (never their values, which
    /// may hold record data).
    public var description: String {
        var text = "CairnError(\(code)\(httpStatus.map { ", HTTP \($0)" } ?? "")): \(message)"
        if let details, !details.isEmpty { text += " [details: \(details.keys.sorted().joined(separator: ", "))]" }
        return text
    }
}

extension ErrorCode {
    /// The network failed or the server could not be reached.
    public static let networkUnavailable: ErrorCode = "network_unavailable"
    /// The server did not answer in time.
    public static let timedOut: ErrorCode = "timed_out"
    /// The server's answer was not what the protocol promises (malformed JSON, wrong shape).
    public static let badResponse: ErrorCode = "bad_response"
    /// The local store could not be read or written.
    public static let storeFailed: ErrorCode = "store_failed"
    /// The store belongs to another user; open it with a ``UserChangePolicy``.
    public static let userMismatch: ErrorCode = "user_mismatch"
    /// The client was signed out; open a new one.
    public static let signedOut: ErrorCode = "signed_out"
    /// No schema is known yet: the first open needs the network once.
    public static let schemaUnavailable: ErrorCode = "schema_unavailable"
    /// The operation was cancelled.
    public static let cancelled: ErrorCode = "cancelled"
    /// The SDK was asked something that does not make sense (an unknown collection, a bad id).
    public static let invalidArgument: ErrorCode = "invalid_argument"
    /// The app's conflict resolver threw; the conflict stays unresolved and its change queued.
    public static let resolverFailed: ErrorCode = "resolver_failed"
    /// The store is encrypted with another key (or passphrase); nothing was read or changed.
    public static let wrongKey: ErrorCode = "wrong_key"
    /// The store is encrypted and was opened without a key.
    public static let keyRequired: ErrorCode = "key_required"
    /// A key was given for a store that is not encrypted; encrypt it first (``StoreEncryption/encrypt(storeAt:with:)``).
    public static let storeNotEncrypted: ErrorCode = "store_not_encrypted"
    /// The store is open (in this app or another process) and cannot be rewritten now.
    public static let storeInUse: ErrorCode = "store_in_use"
    /// Another process syncs this store now (an app and its extension share it); its sync uploads this process's
    /// queued changes too. Retrying later can succeed.
    public static let syncInAnotherProcess: ErrorCode = "sync_in_another_process"
    /// The store's file or folder cannot be written (a read-only file system, a file without write permission): the
    /// store opened for reading (``CairnClient/isReadOnly``); writes and syncs need it writable.
    public static let storeReadOnly: ErrorCode = "store_read_only"
    /// Part of the store failed its integrity check (a changed byte in an encrypted page, or a damaged header).
    public static let storeCorrupted: ErrorCode = "store_corrupted"
    /// Changes or files of this device could not be uploaded, so it was not unregistered: sync and try again, or
    /// pass `discardingPendingChanges: true` to ``CairnClient/unregister(fromServer:deleteStore:discardingPendingChanges:)``.
    public static let pendingChanges: ErrorCode = "pending_changes"
    /// The server refused uploads of this sync (with ``CairnConfiguration/throwUploadFailures`` on):
    /// `details.operations` lists each (`opId`, `collection`, `id`, `code`, `message`); they wait in
    /// ``CairnClient/failedOperations(_:)``. The rest of the sync was done.
    public static let uploadRefused: ErrorCode = "upload_refused"
}

extension CairnError {
    /// An error for a non-2xx answer, from its wire error body (code, message and details) when it has one.
    static func server(status: Int, body: Data) -> CairnError {
        let retryable = status >= 500 || status == 429 || status == 408
        if let envelope = try? CairnJSON.decode(ErrorEnvelope.self, from: body) {
            if envelope.error.code == .actionFailed {
                // An action's backend refused (final) or gave no usable answer: a later call with the same key may
                // succeed, but not at once in place (the backend had its whole timeout).
                return CairnError(
                    .actionFailed, envelope.error.message, details: envelope.error.details, httpStatus: status,
                    isRetryable: envelope.error.details?["retryable"] == true, retriesInPlace: false)
            }
            return CairnError(envelope.error.code, envelope.error.message, details: envelope.error.details, httpStatus: status, isRetryable: retryable)
        }
        let code: ErrorCode = status >= 500 ? .unavailable : .badResponse
        return CairnError(code, "The server answered HTTP \(status) without a Cairn error body", httpStatus: status, isRetryable: retryable)
    }

    static func badResponse(_ what: String, cause: (any Error)? = nil) -> CairnError {
        CairnError(.badResponse, "The server's answer is not valid: \(what)", isRetryable: true, cause: cause)
    }

    static func invalid(_ message: String) -> CairnError { CairnError(.invalidArgument, message) }

    /// Any error as a ``CairnError``, keeping what it says: Cairn errors as they are, wire errors with their code and
    /// details, cancellation as `cancelled`, SQLite failures as `store_failed` with the SQLite code, and anything
    /// else as `internal_error` naming its type.
    init(wrapping error: any Error) {
        switch error {
        case let error as CairnError:
            self = error
        case let error as ErrorBody:
            self.init(error.code, error.message, details: error.details, cause: error)
        case is CancellationError:
            self.init(.cancelled, "The operation was cancelled", cause: error)
        case let error as DatabaseError where error.extendedResultCode.rawValue == 10 | (32 << 8):
            // SQLITE_IOERR_DATA: the store cipher found a block that does not authenticate.
            self.init(
                .storeCorrupted, "The local store failed its integrity check: an encrypted page was changed or damaged",
                details: ["sqliteCode": .integer(Int64(error.extendedResultCode.rawValue))], cause: error)
        case let error as DatabaseError where error.resultCode == .SQLITE_FULL:
            self.init(
                .storageFull, "The device is out of space: the local store could not be written. Free some space; nothing was lost",
                details: ["sqliteCode": .integer(Int64(error.extendedResultCode.rawValue))], cause: error)
        case let error as DatabaseError where error.resultCode == .SQLITE_READONLY:
            self.init(
                .storeReadOnly, "The local store is read-only (its file or folder cannot be written): it can be read, but writes and syncs need it writable",
                details: ["sqliteCode": .integer(Int64(error.extendedResultCode.rawValue))], cause: error)
        case let error where DiskFull.matches(error):
            self.init(.storageFull, "The device is out of space: a file could not be written. Free some space; nothing was lost", cause: error)
        case let error as DatabaseError:
            // GRDB's own description may quote SQL arguments; the result code and SQLite's message do not hold data.
            self.init(
                .storeFailed, "The local store failed: \(error.message ?? "SQLite error \(error.resultCode.rawValue)")",
                details: ["sqliteCode": .integer(Int64(error.extendedResultCode.rawValue))], isRetryable: error.resultCode == .SQLITE_BUSY,
                cause: error)
        default:
            self.init(.internalError, "Unexpected \(type(of: error)) inside Cairn", cause: error)
        }
    }

    /// A local-store failure as a ``CairnError`` (see ``init(wrapping:)``).
    static func store(_ error: any Error) -> CairnError { CairnError(wrapping: error) }

    /// A failure of SQL the app wrote: what the SQL got wrong (its syntax, a write in a read, a missing table) is
    /// `validation_failed`; the store failing under it keeps its own code (`store_corrupted` for a page that failed
    /// the cipher's check, else `store_failed`), as everywhere else.
    static func sql(_ error: any Error) -> CairnError {
        if let error = error as? DatabaseError, storeResultCodes.contains(error.resultCode) { return CairnError(wrapping: error) }
        if let error = error as? CairnError { return error }
        return CairnError(.validationFailed, "The SQL failed: \(error)")
    }

    /// The SQLite result codes that speak of the store (its file, its lock, its memory), not of a statement.
    private static let storeResultCodes: [ResultCode] = [
        .SQLITE_IOERR, .SQLITE_CORRUPT, .SQLITE_NOTADB, .SQLITE_CANTOPEN, .SQLITE_FULL, .SQLITE_NOMEM, .SQLITE_BUSY, .SQLITE_LOCKED,
        .SQLITE_PROTOCOL,
    ]
}
