// swift-tools-version: 6.1
import PackageDescription

// Adapters between SDKAuthorization and the Swift server and observability ecosystem. They live
// here, beside the framework, because they depend on packages; the framework itself depends on none.
// One library product per adapter: an SDK links only the ones it uses.

let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "SDKAuthorizationIntegrations",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "SDKAuthorizationOpenAPI", targets: ["SDKAuthorizationOpenAPI"]),
        .library(name: "SDKAuthorizationAsyncHTTPClient", targets: ["SDKAuthorizationAsyncHTTPClient"]),
        .library(name: "SDKAuthorizationLogging", targets: ["SDKAuthorizationLogging"]),
        .library(name: "SDKAuthorizationMetrics", targets: ["SDKAuthorizationMetrics"]),
        .library(name: "SDKAuthorizationTracing", targets: ["SDKAuthorizationTracing"]),
    ],
    dependencies: [
        .package(name: "SDKAuthorization", path: ".."),
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        // Tests only: the name-coexistence compile test imports it beside the framework.
        .package(url: "https://github.com/apple/swift-openapi-urlsession.git", from: "1.4.0"),
    ],
    targets: [
        // MARK: Adapters

        .target(
            name: "SDKAuthorizationOpenAPI",
            dependencies: [
                .product(name: "SDKAuthorization", package: "SDKAuthorization"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "SDKAuthorizationAsyncHTTPClient",
            dependencies: [
                .product(name: "SDKAuthorization", package: "SDKAuthorization"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "SDKAuthorizationLogging",
            dependencies: [
                .product(name: "SDKAuthorization", package: "SDKAuthorization"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "SDKAuthorizationMetrics",
            dependencies: [
                .product(name: "SDKAuthorization", package: "SDKAuthorization"),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "SDKAuthorizationTracing",
            dependencies: [
                .product(name: "SDKAuthorization", package: "SDKAuthorization"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: strictSettings
        ),

        // MARK: Tests, one target per adapter

        .testTarget(
            name: "SDKAuthorizationOpenAPITests",
            dependencies: [
                "SDKAuthorizationOpenAPI",
                .product(name: "SDKAuthorization", package: "SDKAuthorization"),
                .product(name: "SDKAuthorizationEngagement", package: "SDKAuthorization"),
                .product(name: "SDKAuthorizationTesting", package: "SDKAuthorization"),
                .product(name: "SDKAuthorizationIDToken", package: "SDKAuthorization"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "SDKAuthorizationAsyncHTTPClientTests",
            dependencies: [
                "SDKAuthorizationAsyncHTTPClient",
                .product(name: "SDKAuthorization", package: "SDKAuthorization"),
                .product(name: "SDKAuthorizationTesting", package: "SDKAuthorization"),
                .product(name: "SDKAuthorizationIDToken", package: "SDKAuthorization"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "SDKAuthorizationLoggingTests",
            dependencies: [
                "SDKAuthorizationLogging",
                .product(name: "SDKAuthorization", package: "SDKAuthorization"),
                .product(name: "SDKAuthorizationTesting", package: "SDKAuthorization"),
                .product(name: "SDKAuthorizationIDToken", package: "SDKAuthorization"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "SDKAuthorizationMetricsTests",
            dependencies: [
                "SDKAuthorizationMetrics",
                .product(name: "SDKAuthorization", package: "SDKAuthorization"),
                .product(name: "SDKAuthorizationEngagement", package: "SDKAuthorization"),
                .product(name: "SDKAuthorizationTesting", package: "SDKAuthorization"),
                .product(name: "SDKAuthorizationIDToken", package: "SDKAuthorization"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "SDKAuthorizationTracingTests",
            dependencies: [
                "SDKAuthorizationTracing",
                .product(name: "SDKAuthorization", package: "SDKAuthorization"),
                .product(name: "SDKAuthorizationTesting", package: "SDKAuthorization"),
                .product(name: "SDKAuthorizationIDToken", package: "SDKAuthorization"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: strictSettings
        ),
        // The README's example of each adapter, compiled, and checked against the README.
        .testTarget(
            name: "READMEExampleTests",
            dependencies: [
                "SDKAuthorizationOpenAPI", "SDKAuthorizationAsyncHTTPClient", "SDKAuthorizationLogging",
                "SDKAuthorizationMetrics", "SDKAuthorizationTracing",
                .product(name: "SDKAuthorization", package: "SDKAuthorization"),
                .product(name: "SDKAuthorizationEngagement", package: "SDKAuthorization"),
                .product(name: "SDKAuthorizationIDToken", package: "SDKAuthorization"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: strictSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
