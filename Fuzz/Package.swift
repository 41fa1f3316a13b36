// swift-tools-version:6.2
import PackageDescription

// Cairn's fuzz targets (scripts/fuzz/run.sh): libFuzzer harnesses for every hand-written parser.
//
// The parsers are compiled from Cairn's own source files, through symlinks (one copy of every rule):
// `Sources/CairnProtocol` and `Sources/CairnSQL` are the root package's folders, and `Sources/CairnFuzz/Parsers`
// holds links to the few SDK and server files that parse (scanners, cursors, ranges, JWKS/JWT, console files).
// Compiling them here rather than depending on the root package keeps `package` access working and keeps the
// closure small: no Hummingbird, NIO servers, PostgresNIO or AsyncHTTPClient.
//
// Build (libFuzzer supplies `main`):
//   swift build --package-path Fuzz --build-path .build-fuzz -c release \
//     -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library
let package = Package(
    name: "CairnFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.3"),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.8.0"),
        .package(url: "https://github.com/adam-fowler/compress-nio", from: "1.5.0"),
    ],
    targets: [
        .target(
            name: "CairnProtocol",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]),
        .target(
            name: "CairnSQL",
            dependencies: [
                "CairnProtocol", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]),
        .executableTarget(
            name: "CairnFuzz",
            dependencies: [
                "CairnProtocol", "CairnSQL",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]),
    ]
)
