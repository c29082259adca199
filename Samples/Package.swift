// swift-tools-version: 6.1
import PackageDescription

// Samples for SDKAuthorization: a reference backend (vendor API + app login server) that
// verifies real JWTs over real HTTP on loopback, plus (later) sample apps and end-to-end tests.
// This package may depend on servers and crypto; the root package's library products must not.

let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "SDKAuthorizationSamples",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "ReferenceBackend", targets: ["ReferenceBackend"]),
        .executable(name: "reference-backend", targets: ["reference-backend"]),
        .executable(name: "demo", targets: ["demo"]),
        .executable(name: "token-mode", targets: ["token-mode"]),
        .executable(name: "customer-token-mode", targets: ["customer-token-mode"]),
        .executable(name: "refresh-callback-mode", targets: ["refresh-callback-mode"]),
        .executable(name: "token-exchange-mode", targets: ["token-exchange-mode"]),
        .executable(name: "signature-mode", targets: ["signature-mode"]),
        .executable(name: "signature-queue-worker", targets: ["signature-queue-worker"]),
        .executable(name: "refresh-waiters-benchmark", targets: ["refresh-waiters-benchmark"]),
    ],
    dependencies: [
        .package(name: "SDKAuthorization", path: ".."),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.8.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.6.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        // Only for the test that the framework's names live beside the ecosystem's.
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-openapi-urlsession.git", from: "1.4.0"),
        // Only for the benchmarks (Benchmarks/, BENCHMARKS.md): `swift package --package-path Samples benchmark`.
        .package(url: "https://github.com/ordo-one/benchmark.git", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/ordo-one/malloc-interposer.git", from: "1.6.1"),
    ],
    targets: [
        // MARK: Reference backend

        .target(
            name: "ReferenceBackend",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "reference-backend",
            dependencies: [
                "ReferenceBackend",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ReferenceBackendTests",
            dependencies: [
                "ReferenceBackend",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ],
            swiftSettings: strictSettings
        ),

        // MARK: Sample executables and end-to-end tests

        .target(
            name: "AuthorizationSamples",
            dependencies: [
                "ReferenceBackend",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SDKAuthorization", package: "SDKAuthorization"),
            ],
            swiftSettings: strictSettings
        ),
        .executableTarget(name: "demo", dependencies: ["AuthorizationSamples"], swiftSettings: strictSettings),
        .executableTarget(name: "token-mode", dependencies: ["AuthorizationSamples"], swiftSettings: strictSettings),
        .executableTarget(name: "customer-token-mode", dependencies: ["AuthorizationSamples"], swiftSettings: strictSettings),
        .executableTarget(name: "refresh-callback-mode", dependencies: ["AuthorizationSamples"], swiftSettings: strictSettings),
        .executableTarget(name: "token-exchange-mode", dependencies: ["AuthorizationSamples"], swiftSettings: strictSettings),
        .executableTarget(name: "signature-mode", dependencies: ["AuthorizationSamples"], swiftSettings: strictSettings),
        .executableTarget(name: "signature-queue-worker", dependencies: ["AuthorizationSamples"], swiftSettings: strictSettings),
        .executableTarget(
            name: "refresh-waiters-benchmark",
            dependencies: [.product(name: "SDKAuthorization", package: "SDKAuthorization")],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "AuthorizationSamples",
                "ReferenceBackend",
                .product(name: "SDKAuthorization", package: "SDKAuthorization"),
                .product(name: "SDKAuthorizationTesting", package: "SDKAuthorization"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "NameCoexistenceTests",
            dependencies: [
                .product(name: "SDKAuthorization", package: "SDKAuthorization"),
                .product(name: "SDKAuthorizationTesting", package: "SDKAuthorization"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"),
            ],
            swiftSettings: strictSettings
        ),

        // MARK: Benchmarks (ordo-one/benchmark; each figure a ratio to a floor measured in the same run)

        .target(
            name: "BenchmarkSupport",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "MallocInterposerSwift", package: "malloc-interposer"),
                .product(name: "SDKAuthorization", package: "SDKAuthorization"),
            ],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "AuthorizationBenchmarks",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "SDKAuthorization", package: "SDKAuthorization"),
            ],
            path: "Benchmarks/AuthorizationBenchmarks",
            swiftSettings: strictSettings,
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "LoopbackBenchmarks",
            dependencies: [
                "BenchmarkSupport",
                "ReferenceBackend",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "SDKAuthorization", package: "SDKAuthorization"),
            ],
            path: "Benchmarks/LoopbackBenchmarks",
            swiftSettings: strictSettings,
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
