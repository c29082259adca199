// swift-tools-version: 6.1
import PackageDescription

// What the adapters' tests share, never released and named by no adapter's released manifest: each
// adapter package (Integrations/<Adapter>) declares this package, by path, and its tests only when it
// sits beside the framework's sources. Depending on an adapter never resolves it.
let package = Package(
    name: "IntegrationsTestSupport",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        // A loopback HTTP server (SwiftNIO), for the AsyncHTTPClient and tracing transports' tests.
        .library(name: "IntegrationsTestSupport", targets: ["IntegrationsTestSupport"]),
        // The README's example of an adapter, read from README.md, for its test to compare with the
        // code it compiles (Foundation only).
        .library(name: "READMEExampleSupport", targets: ["READMEExampleSupport"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
    ],
    targets: [
        .target(
            name: "IntegrationsTestSupport",
            dependencies: [
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .target(name: "READMEExampleSupport", swiftSettings: [.enableUpcomingFeature("ExistentialAny")]),
    ],
    swiftLanguageModes: [.v6]
)
