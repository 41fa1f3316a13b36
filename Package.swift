// swift-tools-version:6.2
import PackageDescription

/// Platforms where the SDK talks HTTP through AsyncHTTPClient (Apple platforms use URLSession).
let nonApple: [Platform] = [.linux, .android, .windows, .openbsd, .wasi]

/// `CAIRN_APPLE_EMULATION=1` when the manifest is read builds the package as Apple platforms get it, on Linux: the
/// SDK links no AsyncHTTPClient and every target of Cairn's is compiled with the `CAIRN_APPLE_EMULATION` condition, so code
/// guarded by `#if canImport(Darwin) || CAIRN_APPLE_EMULATION` (the one spelling of "the SDK's transport is
/// URLSession") takes its Apple branch. CI builds this way last, in `.build` (the dependencies carry no condition, so
/// those built already are reused), so a use of AsyncHTTPClient that would break the Apple build breaks here.
let appleEmulation = Context.environment["CAIRN_APPLE_EMULATION"] == "1"

/// The SDK's AsyncHTTPClient and NIO, linked only where it uses them.
let sdkHTTPClient: [Target.Dependency] =
    appleEmulation
    ? []
    : [
        .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(platforms: nonApple)),
        .product(name: "NIOCore", package: "swift-nio", condition: .when(platforms: nonApple)),
        .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(platforms: nonApple)),
        .product(name: "NIOPosix", package: "swift-nio", condition: .when(platforms: nonApple)),
        .product(name: "NIOFoundationCompat", package: "swift-nio", condition: .when(platforms: nonApple)),
    ]

let package = Package(
    name: "Cairn",
    // Synchronization.Mutex needs macOS 15 and iOS 18.
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "CairnProtocol", targets: ["CairnProtocol"]),
        .library(name: "Cairn", targets: ["Cairn"]),
        .library(name: "CairnServer", targets: ["CairnServer"]),
        .library(name: "CairnTesting", targets: ["CairnTesting"]),
        .executable(name: "cairn", targets: ["cairn"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth", from: "2.5.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.3"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.8.0"),
        .package(url: "https://github.com/adam-fowler/compress-nio", from: "1.5.0"),
    ],
    targets: [
        .target(
            name: "CairnProtocol",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                // gzip on the wire (zlib), for the SDK and the server alike.
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]),
        // The filter language compiled to SQL, shared by the SDK's store and the server's storage (package access only).
        .target(
            name: "CairnSQL",
            dependencies: [
                "CairnProtocol", .product(name: "GRDB", package: "GRDB.swift"),
                // BoundStatement binds the hot write loops' values through SQLite's C API.
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]),
        // The page cipher's VFS under SQLite (C); its cryptography is in Cairn (Swift, swift-crypto).
        .target(name: "CCairnStoreCipher", linkerSettings: [.linkedLibrary("sqlite3")]),
        .target(
            name: "Cairn",
            dependencies: [
                "CairnProtocol",
                "CairnSQL",
                "CCairnStoreCipher",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                // SHA-256 of files, streamed (uploads declare it, downloads are checked against it).
                .product(name: "Crypto", package: "swift-crypto"),
                // PBKDF2 for store passphrases.
                .product(name: "CryptoExtras", package: "swift-crypto"),
                // Apple platforms use URLSession; AsyncHTTPClient and NIO are linked only where the SDK uses them.
            ] + sdkHTTPClient
        ),
        .target(
            name: "CairnServer",
            dependencies: [
                "CairnProtocol",
                "CairnSQL",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                // bcrypt runs on NIO's thread pool, off the request's task.
                .product(name: "NIOPosix", package: "swift-nio"),
                // Files' bytes stream to and from disk without blocking (Hummingbird uses it too).
                .product(name: "_NIOFileSystem", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                // The PostgreSQL backend: pooled connections, and TLS to the database.
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                // GET /metrics: swift-metrics' API, kept per server in a Prometheus registry.
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                // Sign-in through an identity provider: JWTs verified against the provider's JWKS.
                .product(name: "JWTKit", package: "jwt-kit"),
                // The identity provider's JWKS fetched from its URL.
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            resources: [.copy("Resources/openapi.json"), .copy("Resources/console")]
        ),
        // A TCP proxy that makes loopback behave like a slow network link (bandwidth, latency, dropped connections):
        // CairnTesting exports it for tests, `cairn bench network` measures through it.
        .target(
            name: "CairnLinkShaping",
            dependencies: [.product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio")]),
        .target(
            name: "CairnTesting",
            dependencies: [
                "CairnLinkShaping",
                "Cairn",
                "CairnServer",
                "CairnProtocol",
                .product(name: "Crypto", package: "swift-crypto"),
                // TestIdentityProvider's RSA keys.
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                // StubHTTPServer: the other systems tests talk to (a JWKS, an action's backend).
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        .executableTarget(
            name: "cairn",
            dependencies: [
                "Cairn",
                "CairnServer",
                "CairnProtocol",
                .product(name: "GRDB", package: "GRDB.swift"),
                // The bench's floor: SQLite's C API itself.
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                // The webhook bench's receiver.
                .product(name: "Hummingbird", package: "hummingbird"),
                // The table collection bench writes with SQL as other software does.
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                // `cairn bench network` runs the sync through a shaped link.
                "CairnLinkShaping",
            ]
        ),
        // Extracts the Swift code of README.md and the DocC catalogs at build time (see CairnDocSnippetTests).
        .executableTarget(name: "cairn-doc-snippets"),
        .plugin(name: "DocSnippets", capability: .buildTool(), dependencies: ["cairn-doc-snippets"]),
        // Every code sample of the docs, compiled by the test build (the README's test example also runs).
        .testTarget(
            name: "CairnDocSnippetTests",
            dependencies: [
                "Cairn", "CairnProtocol", "CairnServer", "CairnTesting",
                .product(name: "Logging", package: "swift-log"),
            ],
            // Samples declare names they do not use again; their warnings say nothing about the SDK.
            swiftSettings: [.unsafeFlags(["-suppress-warnings"])],
            plugins: ["DocSnippets"]
        ),
        .testTarget(name: "CairnProtocolTests", dependencies: ["CairnProtocol", "CairnTesting"]),
        .testTarget(name: "CairnSQLTests", dependencies: ["CairnSQL", "CairnProtocol", .product(name: "GRDB", package: "GRDB.swift")]),
        .testTarget(
            name: "CairnTests",
            dependencies: [
                "Cairn", "CairnProtocol", "CairnServer", "CairnTesting",
                // Collections kept in PostgreSQL tables are written by other programs' SQL sessions in their tests.
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]),
        .testTarget(name: "CairnToolTests", dependencies: ["cairn", "Cairn", "CairnProtocol", "CairnServer", "CairnTesting"]),
        .testTarget(
            name: "CairnServerTests",
            dependencies: [
                "CairnServer", "CairnProtocol", "CairnTesting",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                // Identity provider tests sign their own JWTs and serve their JWKS over HTTP.
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ]
        ),
    ]
)

if appleEmulation {
    for target in package.targets where !target.name.hasPrefix("CC") && target.type != .plugin {
        target.swiftSettings = (target.swiftSettings ?? []) + [.define("CAIRN_APPLE_EMULATION")]
    }
}

// The project's own code builds without warnings: any warning in Sources/ fails the build (and CI). Packages that
// depend on Cairn are not affected: SwiftPM ignores warning settings of dependencies.
for target in package.targets where target.type != .test && target.type != .plugin {
    if target.name.hasPrefix("CC") {
        target.cSettings = (target.cSettings ?? []) + [.treatAllWarnings(as: .error)]
    } else {
        target.swiftSettings = (target.swiftSettings ?? []) + [.treatAllWarnings(as: .error)]
    }
}
