import ArgumentParser
import CairnProtocol
import Foundation

/// A user-facing failure of the tool: printed as `error: message`, exit code 1.
struct CLIError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }

    init(_ message: String) { self.message = message }

    /// Runs `body`, turning any error into a CLIError that starts with `context`.
    static func wrap<T>(_ context: String, _ body: () throws -> T) throws -> T {
        do { return try body() } catch { throw CLIError("\(context): \(describe(error))") }
    }

    /// Runs `body`, turning any error into a CLIError that starts with `context`.
    static func wrap<T>(_ context: String, _ body: () async throws -> T) async throws -> T {
        do { return try await body() } catch { throw CLIError("\(context): \(describe(error))") }
    }

    static func describe(_ error: any Error) -> String {
        switch error {
        case let error as ErrorBody: return "\(error.message) (\(error.code))"
        case let error as CLIError: return error.message
        // A file that cannot be read: its sentence ("The file “x” couldn’t be opened because there is no such file."),
        // not the error's whole dump.
        case let error as CocoaError: return error.localizedDescription
        case let error as DecodingError:
            switch error {
            case .keyNotFound(let key, let context): return "missing \(path(context.codingPath + [key]))"
            case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
                return "\(path(context.codingPath)): \(context.debugDescription)"
            @unknown default: return "\(error)"
            }
        default: return "\(error)"
        }
    }

    private static func path(_ keys: [any CodingKey]) -> String {
        keys.isEmpty ? "the document" : keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
    }
}
