// swift-tools-version: 6.1
import Foundation
import PackageDescription

// The swift-distributed-tracing adapter of SDKAuthorization: TracingEventObserver and
// TracingHTTPTransport, spans for refreshes, waits and requests. A package of its own, one per
// adapter, so that an app that depends on it resolves the framework, this package and
// swift-distributed-tracing, nothing else (Scripts/check-install proves the exact set).
//
// Released as its own repository,
// https://github.com/sdkauthorization/swift-sdk-authorization-tracing.git (this folder, split out
// with `git subtree split --prefix Integrations/Tracing`), tagged with the framework's version,
// which it then depends on by URL and version like any app. Developed here, beside the framework's
// sources, it uses the working tree instead, so a change to both builds and tests together; and
// only here does it declare its tests and what they alone need (the shared Integrations/TestSupport
// package among them), so the released manifest names no test-only package.
let frameworkURL = "https://github.com/sdkauthorization/swift-sdk-authorization.git"
let frameworkVersion: Version = "0.1.0"
let besideFramework = FileManager.default.fileExists(
    atPath: Context.packageDirectory + "/../../Sources/SDKAuthorization/Authorizer/RequestAuthorizer.swift"
)
// How products of the framework are named below: by the package's name when used by path, by the
// URL's last component when resolved by URL.
let frameworkPackage = besideFramework ? "SDKAuthorization" : "swift-sdk-authorization"
func framework(_ product: String) -> Target.Dependency { .product(name: product, package: frameworkPackage) }

let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "SDKAuthorizationTracing",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "SDKAuthorizationTracing", targets: ["SDKAuthorizationTracing"]),
    ],
    dependencies: [
        besideFramework
            ? .package(name: "SDKAuthorization", path: "../..")
            : .package(url: frameworkURL, from: frameworkVersion),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
    ],
    targets: [
        .target(
            name: "SDKAuthorizationTracing",
            dependencies: [
                framework("SDKAuthorization"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: strictSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)

// The tests, declared beside the framework only: the adapter's own and its README example
// (compiled, and checked against the README).
if besideFramework {
    package.dependencies += [
        .package(name: "IntegrationsTestSupport", path: "../TestSupport"),
    ]
    package.targets.append(
        .testTarget(
            name: "SDKAuthorizationTracingTests",
            dependencies: [
                "SDKAuthorizationTracing",
                framework("SDKAuthorization"),
                framework("SDKAuthorizationTesting"),
                framework("SDKAuthorizationIDToken"),
                framework("SDKAuthorizationEngagement"),
                .product(name: "IntegrationsTestSupport", package: "IntegrationsTestSupport"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "READMEExampleSupport", package: "IntegrationsTestSupport"),
            ],
            swiftSettings: strictSettings
        )
    )
}
