// swift-tools-version: 6.0
import PackageDescription

// The framework's products depend on nothing outside the Swift toolchain.
// Servers, JWT signing and benchmarks live in Samples/ (its own Package.swift).
let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "SDKAuthorization",
    products: [
        .library(name: "SDKAuthorization", targets: ["SDKAuthorization"]),
        .library(name: "SDKAuthorizationTesting", targets: ["SDKAuthorizationTesting"]),
    ],
    targets: [
        .target(name: "SDKAuthorization", swiftSettings: strictSettings),
        .target(
            name: "SDKAuthorizationTesting",
            dependencies: ["SDKAuthorization"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "SDKAuthorizationTests",
            dependencies: ["SDKAuthorization", "SDKAuthorizationTesting"],
            swiftSettings: strictSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
