// swift-tools-version: 6.1
import Foundation
import PackageDescription

// Adapters between SDKAuthorization and the Swift server and observability ecosystem. They are a
// package of their own because they depend on packages; the framework itself depends on none.
// One library product per adapter: an SDK links only the ones it uses.
//
// Released as its own repository (this folder, split out with `git subtree split --prefix
// Integrations`), tagged with the same version as the framework, which it depends on by URL and
// version like any app. Developed here, beside the framework's sources, it uses the working tree
// instead, so a change to both builds and tests together. Scripts/check-install proves the released
// shape: both repositories tagged, resolved by URL from an outside package.
let frameworkURL = "https://github.com/sdkauthorization/swift-sdk-authorization.git"
let frameworkVersion: Version = "0.1.0"
let besideFramework = FileManager.default.fileExists(
    atPath: Context.packageDirectory + "/../Sources/SDKAuthorization/Authorizer/RequestAuthorizer.swift"
)
let framework: Package.Dependency = besideFramework
    ? .package(name: "SDKAuthorization", path: "..")
    : .package(url: frameworkURL, from: frameworkVersion)
// How products of the framework are named below: by the package's name when used by path, by the
// URL's last component when resolved by URL.
let frameworkPackage = besideFramework ? "SDKAuthorization" : "swift-sdk-authorization"

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
        framework,
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
                .product(name: "SDKAuthorization", package: frameworkPackage),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "SDKAuthorizationAsyncHTTPClient",
            dependencies: [
                .product(name: "SDKAuthorization", package: frameworkPackage),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "SDKAuthorizationLogging",
            dependencies: [
                .product(name: "SDKAuthorization", package: frameworkPackage),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "SDKAuthorizationMetrics",
            dependencies: [
                .product(name: "SDKAuthorization", package: frameworkPackage),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "SDKAuthorizationTracing",
            dependencies: [
                .product(name: "SDKAuthorization", package: frameworkPackage),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: strictSettings
        ),

        // MARK: Tests, one target per adapter

        // What several test targets share: a loopback HTTP server. Not a product.
        .target(
            name: "IntegrationsTestSupport",
            dependencies: [
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Tests/IntegrationsTestSupport",
            swiftSettings: strictSettings
        ),

        .testTarget(
            name: "SDKAuthorizationOpenAPITests",
            dependencies: [
                "SDKAuthorizationOpenAPI",
                .product(name: "SDKAuthorization", package: frameworkPackage),
                .product(name: "SDKAuthorizationEngagement", package: frameworkPackage),
                .product(name: "SDKAuthorizationTesting", package: frameworkPackage),
                .product(name: "SDKAuthorizationIDToken", package: frameworkPackage),
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
                "IntegrationsTestSupport",
                .product(name: "SDKAuthorization", package: frameworkPackage),
                .product(name: "SDKAuthorizationTesting", package: frameworkPackage),
                .product(name: "SDKAuthorizationIDToken", package: frameworkPackage),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "SDKAuthorizationLoggingTests",
            dependencies: [
                "SDKAuthorizationLogging",
                .product(name: "SDKAuthorization", package: frameworkPackage),
                .product(name: "SDKAuthorizationTesting", package: frameworkPackage),
                .product(name: "SDKAuthorizationIDToken", package: frameworkPackage),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "SDKAuthorizationMetricsTests",
            dependencies: [
                "SDKAuthorizationMetrics",
                .product(name: "SDKAuthorization", package: frameworkPackage),
                .product(name: "SDKAuthorizationEngagement", package: frameworkPackage),
                .product(name: "SDKAuthorizationTesting", package: frameworkPackage),
                .product(name: "SDKAuthorizationIDToken", package: frameworkPackage),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "SDKAuthorizationTracingTests",
            dependencies: [
                "SDKAuthorizationTracing",
                "IntegrationsTestSupport",
                .product(name: "SDKAuthorization", package: frameworkPackage),
                .product(name: "SDKAuthorizationTesting", package: frameworkPackage),
                .product(name: "SDKAuthorizationIDToken", package: frameworkPackage),
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
                .product(name: "SDKAuthorization", package: frameworkPackage),
                .product(name: "SDKAuthorizationEngagement", package: frameworkPackage),
                .product(name: "SDKAuthorizationIDToken", package: frameworkPackage),
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
