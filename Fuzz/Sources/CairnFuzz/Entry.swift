import Foundation

/// The fuzz targets by name; `CAIRN_FUZZ_TARGET` picks the one this process runs (scripts/fuzz/run.sh sets it).
let targets: [String: @Sendable ([UInt8]) -> Void] = [
    "json": JSONTarget.run,
    "changes-page": ChangesPageTarget.run,
    "batch-results": BatchResultsTarget.run,
    "filter": FilterTarget.run,
    "schema": SchemaTarget.run,
    "sse": SSETarget.run,
    "cursor": CursorTarget.run,
    "http-ranges": HTTPRangesTarget.run,
    "gzip": GzipTarget.run,
    "rfc3339": RFC3339Target.run,
    "jwt": JWTTarget.run,
    "jwks": JWKSTarget.run,
    "console-path": ConsolePathTarget.run,
]

let selected: @Sendable ([UInt8]) -> Void = {
    let name = ProcessInfo.processInfo.environment["CAIRN_FUZZ_TARGET"] ?? ""
    guard let target = targets[name] else {
        fatalError("set CAIRN_FUZZ_TARGET to one of: \(targets.keys.sorted().joined(separator: ", ")) (got \"\(name)\")")
    }
    return target
}()

/// libFuzzer's entry point: one input, checked by the selected target. libFuzzer supplies `main`.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = size == 0 || data == nil ? [] : Array(UnsafeBufferPointer(start: data, count: size))
    selected(bytes)
    return 0
}

/// SwiftPM links an executable's entry point as `<Module>_main`: it hands over to libFuzzer's driver, which runs
/// `testOneInput` as libFuzzer's own `main` would.
@_cdecl("CairnFuzz_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var count = argc
    var arguments = argv
    return LLVMFuzzerRunDriver(&count, &arguments, testOneInput)
}

@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt
