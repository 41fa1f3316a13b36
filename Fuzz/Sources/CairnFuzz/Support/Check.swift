import CairnProtocol
import Foundation

/// Stops the process (libFuzzer keeps the input as a crash) when a property of a target does not hold.
func require(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line) {
    if !condition() { fatalError("property failed: \(message())", file: file, line: line) }
}

/// Runs async work to its end from the fuzzer's synchronous entry point.
func runBlocking<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
    let box = Box<T>()
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        box.value = await body()
        done.signal()
    }
    done.wait()
    return box.value!
}

/// A short printable form of bytes for messages.
func show(_ bytes: some Sequence<UInt8>) -> String {
    String(decoding: Array(bytes.prefix(300)), as: UTF8.self).debugDescription
}

/// Carries a result out of the task that made it.
private final class Box<T>: @unchecked Sendable {
    var value: T?
}

/// Whether any object of the JSON text names a member twice (the strict parser and the `Codable` models read the
/// last; a scanner may refuse the first when it is malformed, which is no disagreement worth reporting).
func hasRepeatedMembers(_ bytes: [UInt8]) -> Bool {
    bytes.withUnsafeBufferPointer { buffer in
        var parser = JSONParser(bytes: buffer)
        var repeated = false
        func walk(_ parser: inout JSONParser) throws {
            parser.skipWhitespace()
            switch parser.peek {
            case UInt8(ascii: "{"):
                var names: Set<String> = []
                try parser.members { parser, name in
                    if !names.insert(name).inserted { repeated = true }
                    try walk(&parser)
                }
            case UInt8(ascii: "["): try parser.elements { parser in try walk(&parser) }
            default: try parser.skipValue()
            }
        }
        try? walk(&parser)
        return repeated
    }
}
