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
