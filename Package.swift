// swift-tools-version: 6.0
import PackageDescription

// The framework's products depend on nothing outside the Swift toolchain.
// Servers, JWT signing and benchmarks live in Samples/ (its own Package.swift).
let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

// The oldest systems the code builds for: Swift concurrency (macOS 10.15, iOS 13) and
// `FileHandle.read(upToCount:)` (macOS 10.15.4, iOS 13.4, watchOS 6.2). Apple-only code sits behind
// `#if canImport(...)` (Scripts/check-portability); these minimums are not built on Linux, so they
// are the newest API the sources name, checked by reading, not by an Apple SDK.
let package = Package(
    name: "SDKAuthorization",
    platforms: [.macOS("10.15.4"), .iOS("13.4"), .tvOS("13.4"), .watchOS("6.2"), .visionOS(.v1)],
    products: [
        .library(name: "SDKAuthorization", targets: ["SDKAuthorization"]),
        .library(name: "SDKAuthorizationModeKit", targets: ["SDKAuthorizationModeKit"]),
        .library(name: "SDKAuthorizationEngagement", targets: ["SDKAuthorizationEngagement"]),
        .library(name: "SDKAuthorizationIDToken", targets: ["SDKAuthorizationIDToken"]),
        .library(name: "SDKAuthorizationSignature", targets: ["SDKAuthorizationSignature"]),
        .library(name: "SDKAuthorizationTokenExchange", targets: ["SDKAuthorizationTokenExchange"]),
        .library(name: "SDKAuthorizationTesting", targets: ["SDKAuthorizationTesting"]),
        .executable(name: "sdkauth-config", targets: ["sdkauth-config"]),
        .plugin(name: "ValidateAuthorizationConfiguration", targets: ["ValidateAuthorizationConfiguration"]),
        .plugin(name: "RegisterAuthorizationProviders", targets: ["RegisterAuthorizationProviders"]),
        .plugin(name: "AuthorizationDoctor", targets: ["AuthorizationDoctor"]),
    ],
    targets: [
        // The core: the seam and its one request loop, the client and its transports, policy types,
        // provider protocols, credentials, deadlines, events, diagnostics and errors
        // (ConfigurationError among them). No vendor's catalogue.
        .target(name: "SDKAuthorization", dependencies: ["SDKAuthorizationPrimitives"], swiftSettings: strictSettings),
        // The rules and the lock the core and every mode share, depending on nothing: header-field
        // rules, host names, text safe for a log, redaction, `Locked`. No product of its own: the
        // core imports it internally (none of it is in the core's API), and the mode kit re-exports
        // it, so a mode author's one `import SDKAuthorizationModeKit` brings it.
        .target(name: "SDKAuthorizationPrimitives", swiftSettings: strictSettings),
        // What a mode author builds with, on the core: the refresher (SingleFlight) and the two
        // providers built on it (RefreshingTokenProvider, CachingAuthorizationProvider), credential
        // stores and their namespaces, the bounded JSON reader and JWT claims, file rules, mode
        // descriptions and the provider registry (names to modes, factories and types; no vendor).
        .target(name: "SDKAuthorizationModeKit", dependencies: ["SDKAuthorization", "SDKAuthorizationPrimitives"], swiftSettings: strictSettings),
        // Vendor modes. The Bloomreach Engagement (Exponea) mode: its configuration (in code or from
        // a file), the nine-endpoint catalogue and AuthorizationPolicy.engagement, its schema on the
        // kit's provider registry (a class found by name, the documented messages, its reserved
        // keys), the Exponea-shaped provider class and its adapter, and
        // AuthorizedHTTPClient's configuration initializers.
        .target(name: "SDKAuthorizationEngagement", dependencies: ["SDKAuthorization", "SDKAuthorizationModeKit"], swiftSettings: strictSettings),
        // The other modes, each depending on the core and the mode kit only. A mode the registry finds by name
        // (IDTokenRefreshMode, SignatureMode, TokenExchangeMode for SDKAuthorization.IDTokenRefresh,
        // .Signature, .TokenExchange) is a NamedProviderFactory, a mode kit protocol.
        .target(name: "SDKAuthorizationIDToken", dependencies: ["SDKAuthorization", "SDKAuthorizationModeKit"], swiftSettings: strictSettings),
        .target(name: "SDKAuthorizationSignature", dependencies: ["SDKAuthorization", "SDKAuthorizationModeKit"], swiftSettings: strictSettings),
        .target(name: "SDKAuthorizationTokenExchange", dependencies: ["SDKAuthorization", "SDKAuthorizationModeKit"], swiftSettings: strictSettings),
        .target(
            name: "SDKAuthorizationTesting",
            dependencies: ["SDKAuthorization"],
            swiftSettings: strictSettings
        ),
        // The authorization doctor's logic (no product): configuration files checked as a client
        // starts, provider manifests, JWTs. Links every mode so the built-in provider names resolve
        // (which of them the app links is told by --linked-products), and reads manifests with the
        // build-time generator's reader, so the two accept the same files.
        .target(
            name: "SDKAuthorizationDoctor",
            dependencies: [
                "SDKAuthorization", "SDKAuthorizationModeKit", "SDKAuthorizationEngagement", "SDKAuthorizationIDToken", "SDKAuthorizationSignature",
                "SDKAuthorizationTokenExchange", "ProviderRegistrationGenerator",
            ],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "sdkauth-config",
            dependencies: ["SDKAuthorizationDoctor"],
            swiftSettings: strictSettings
        ),
        .plugin(
            name: "ValidateAuthorizationConfiguration",
            capability: .command(
                intent: .custom(
                    verb: "validate-authorization-config",
                    description: "Check SDKAuthorization configuration files (JSON or property list); the same as authorization-doctor"
                )
            ),
            dependencies: ["sdkauth-config"]
        ),
        // The same doctor under its own verb; validate-authorization-config stays as its alias.
        .plugin(
            name: "AuthorizationDoctor",
            capability: .command(
                intent: .custom(
                    verb: "authorization-doctor",
                    description: "Check SDKAuthorization configuration files as a client starts from them, and decode JWTs (--jwt)"
                )
            ),
            dependencies: ["sdkauth-config"]
        ),
        // Build-time provider registration: a target's sdkauth-providers.json becomes a generated
        // ProviderRegistry.registerManifestProviders(), and a misspelt or non-conforming type a compile
        // error at the manifest's line. The generator's logic is a package library with its own tests;
        // its manifest reader (ProviderManifest, public here, no product) is also the doctor's.
        .target(
            name: "ProviderRegistrationGenerator",
            dependencies: ["SDKAuthorization", "SDKAuthorizationModeKit", "SDKAuthorizationEngagement"],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "sdkauth-register-providers",
            dependencies: ["ProviderRegistrationGenerator"],
            swiftSettings: strictSettings
        ),
        .plugin(
            name: "RegisterAuthorizationProviders",
            capability: .buildTool(),
            dependencies: ["sdkauth-register-providers"]
        ),
        // Test support only (no product): the time limit every suite of the test targets carries,
        // and files that misbehave when read (FIFOs, sparse giants) for the readers' tests.
        .target(name: "TestSupport", dependencies: ["SDKAuthorization", "SDKAuthorizationModeKit"], path: "Tests/TestSupport", swiftSettings: strictSettings),
        // The Engagement mode's test fixtures (no product), for its tests and the tests across modes.
        .target(
            name: "EngagementTestSupport",
            dependencies: ["SDKAuthorization", "SDKAuthorizationModeKit", "SDKAuthorizationEngagement"],
            path: "Tests/EngagementTestSupport",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ProviderRegistrationGeneratorTests",
            dependencies: ["ProviderRegistrationGenerator", "TestSupport"],
            swiftSettings: strictSettings
        ),
        // The core's tests import no mode: what they prove holds for any mode built on the core.
        .testTarget(
            name: "SDKAuthorizationTests",
            dependencies: ["SDKAuthorization", "SDKAuthorizationModeKit", "SDKAuthorizationTesting", "TestSupport"],
            swiftSettings: strictSettings
        ),
        // Each mode's tests, with the core and that mode only.
        .testTarget(
            name: "SDKAuthorizationEngagementTests",
            dependencies: ["SDKAuthorization", "SDKAuthorizationModeKit", "SDKAuthorizationEngagement", "SDKAuthorizationTesting", "TestSupport", "EngagementTestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "SDKAuthorizationIDTokenTests",
            dependencies: ["SDKAuthorization", "SDKAuthorizationModeKit", "SDKAuthorizationIDToken", "SDKAuthorizationTesting", "TestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "SDKAuthorizationSignatureTests",
            dependencies: ["SDKAuthorization", "SDKAuthorizationModeKit", "SDKAuthorizationSignature", "SDKAuthorizationTesting", "TestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "SDKAuthorizationTokenExchangeTests",
            dependencies: ["SDKAuthorization", "SDKAuthorizationModeKit", "SDKAuthorizationTokenExchange", "SDKAuthorizationTesting", "TestSupport"],
            swiftSettings: strictSettings
        ),
        // Tests across modes: built-in modes chosen by name, several modes in one client or process.
        .testTarget(
            name: "SDKAuthorizationModesTests",
            dependencies: [
                "SDKAuthorization", "SDKAuthorizationModeKit", "SDKAuthorizationEngagement", "SDKAuthorizationIDToken", "SDKAuthorizationSignature",
                "SDKAuthorizationTokenExchange", "SDKAuthorizationTesting", "TestSupport", "EngagementTestSupport",
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "SDKAuthorizationDoctorTests",
            dependencies: ["SDKAuthorizationDoctor", "ProviderRegistrationGenerator", "SDKAuthorization", "SDKAuthorizationModeKit", "SDKAuthorizationEngagement", "TestSupport"],
            swiftSettings: strictSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
