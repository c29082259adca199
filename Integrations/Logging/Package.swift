// swift-tools-version: 6.1
import Foundation
import PackageDescription

// The swift-log adapter of SDKAuthorization: SwiftLogDiagnosticsSink, the framework's diagnostics
// as swift-log messages. A package of its own, one per adapter, so that an app that depends on it
// resolves the framework, this package and swift-log, nothing else (Scripts/check-install proves
// the exact set).
//
// Released as its own repository,
// https://github.com/sdkauthorization/swift-sdk-authorization-logging.git (this folder, split out
// with `git subtree split --prefix Integrations/Logging`), tagged with the framework's version,
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
    name: "SDKAuthorizationLogging",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "SDKAuthorizationLogging", targets: ["SDKAuthorizationLogging"]),
    ],
    dependencies: [
        besideFramework
            ? .package(name: "SDKAuthorization", path: "../..")
            : .package(url: frameworkURL, from: frameworkVersion),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    ],
    targets: [
        .target(
            name: "SDKAuthorizationLogging",
            dependencies: [
                framework("SDKAuthorization"),
                .product(name: "Logging", package: "swift-log"),
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
            name: "SDKAuthorizationLoggingTests",
            dependencies: [
                "SDKAuthorizationLogging",
                framework("SDKAuthorization"),
                framework("SDKAuthorizationModeKit"),
                framework("SDKAuthorizationTesting"),
                framework("SDKAuthorizationIDToken"),
                framework("SDKAuthorizationEngagement"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "READMEExampleSupport", package: "IntegrationsTestSupport"),
            ],
            swiftSettings: strictSettings
        )
    )
}
