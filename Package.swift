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
        .library(name: "SDKAuthorizationIDToken", targets: ["SDKAuthorizationIDToken"]),
        .library(name: "SDKAuthorizationSignature", targets: ["SDKAuthorizationSignature"]),
        .library(name: "SDKAuthorizationTokenExchange", targets: ["SDKAuthorizationTokenExchange"]),
        .library(name: "SDKAuthorizationTesting", targets: ["SDKAuthorizationTesting"]),
        .executable(name: "sdkauth-config", targets: ["sdkauth-config"]),
        .plugin(name: "ValidateAuthorizationConfiguration", targets: ["ValidateAuthorizationConfiguration"]),
    ],
    targets: [
        // The core: the seam and its one request loop, policy, provider protocols, credentials, the
        // refresh primitive, deadlines, events, errors, transports, and (for now) the Engagement
        // configuration, registry and provider-class adapter.
        .target(name: "SDKAuthorization", swiftSettings: strictSettings),
        // Vendor modes, each depending on the core only.
        .target(name: "SDKAuthorizationIDToken", dependencies: ["SDKAuthorization"], swiftSettings: strictSettings),
        .target(name: "SDKAuthorizationSignature", dependencies: ["SDKAuthorization"], swiftSettings: strictSettings),
        .target(name: "SDKAuthorizationTokenExchange", dependencies: ["SDKAuthorization"], swiftSettings: strictSettings),
        .target(
            name: "SDKAuthorizationTesting",
            dependencies: ["SDKAuthorization"],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "sdkauth-config",
            dependencies: ["SDKAuthorization"],
            swiftSettings: strictSettings
        ),
        .plugin(
            name: "ValidateAuthorizationConfiguration",
            capability: .command(
                intent: .custom(
                    verb: "validate-authorization-config",
                    description: "Check SDKAuthorization configuration files (JSON or property list)"
                )
            ),
            dependencies: ["sdkauth-config"]
        ),
        .testTarget(
            name: "SDKAuthorizationTests",
            dependencies: [
                "SDKAuthorization", "SDKAuthorizationIDToken", "SDKAuthorizationSignature", "SDKAuthorizationTokenExchange",
                "SDKAuthorizationTesting",
            ],
            swiftSettings: strictSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
