// swift-tools-version: 6.0
import PackageDescription

// A mode written outside the framework: RFC 9449 DPoP (proof-of-possession tokens), built on the
// framework's public API only, as an app's or another SDK's package would build one.
// An app that installs the framework by URL names it `package: "swift-sdk-authorization"`; here it
// is the working tree two folders up, whose package identity is that folder's name.
let framework = Context.packageDirectory.split(separator: "/").dropLast(2).last.map(String.init) ?? "SDKAuthorization"

let package = Package(
    name: "DPoPMode",
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "DPoPMode", targets: ["DPoPMode"]),
    ],
    dependencies: [
        .package(path: "../.."),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
    ],
    targets: [
        .target(
            name: "DPoPMode",
            dependencies: [
                .product(name: "SDKAuthorization", package: framework),
                .product(name: "SDKAuthorizationModeKit", package: framework),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            exclude: ["sdkauth-mode.json"]
        ),
        .testTarget(
            name: "DPoPModeTests",
            dependencies: [
                "DPoPMode",
                .product(name: "SDKAuthorization", package: framework),
                .product(name: "SDKAuthorizationModeKit", package: framework),
                .product(name: "SDKAuthorizationEngagement", package: framework),
                .product(name: "SDKAuthorizationTesting", package: framework),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            // Tests/DPoPModeTests/sdkauth-providers.json registers the mode by type, as an app's
            // build-time registration does (mode `factory`, which uses `init()`).
            plugins: [.plugin(name: "RegisterAuthorizationProviders", package: framework)]
        ),
    ],
    swiftLanguageModes: [.v6]
)
