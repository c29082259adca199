// swift-tools-version: 6.1
import Foundation
import PackageDescription

// The OpenAPI adapter of SDKAuthorization: AuthorizationMiddleware, a ClientMiddleware for
// swift-openapi-generator clients. A package of its own, one per adapter, so that an app that
// depends on it resolves the framework, this package, swift-openapi-runtime and swift-http-types,
// nothing else (Scripts/check-install proves the exact set).
//
// Released as its own repository,
// https://github.com/sdkauthorization/swift-sdk-authorization-openapi.git (this folder, split out
// with `git subtree split --prefix Integrations/OpenAPI`), tagged with the framework's version,
// which it then depends on by URL and version like any app. Developed here, beside the framework's
// sources, it uses the working tree instead, so a change to both builds and tests together; and
// only here does it declare its tests and what they alone need, so the released manifest names no
// test-only package.
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
    name: "SDKAuthorizationOpenAPI",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "SDKAuthorizationOpenAPI", targets: ["SDKAuthorizationOpenAPI"]),
    ],
    dependencies: [
        besideFramework
            ? .package(name: "SDKAuthorization", path: "../..")
            : .package(url: frameworkURL, from: frameworkVersion),
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
    ],
    targets: [
        .target(
            name: "SDKAuthorizationOpenAPI",
            dependencies: [
                framework("SDKAuthorization"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: strictSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)

// The tests, declared beside the framework only. (The middleware's README example needs a generated
// client: Samples compiles it.)
if besideFramework {
    package.dependencies += [
        // The name-coexistence compile test imports it beside the framework.
        .package(url: "https://github.com/apple/swift-openapi-urlsession.git", from: "1.4.0"),
    ]
    package.targets.append(
        .testTarget(
            name: "SDKAuthorizationOpenAPITests",
            dependencies: [
                "SDKAuthorizationOpenAPI",
                framework("SDKAuthorization"),
                framework("SDKAuthorizationTesting"),
                framework("SDKAuthorizationModeKit"),
                framework("SDKAuthorizationIDToken"),
                framework("SDKAuthorizationEngagement"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"),
            ],
            swiftSettings: strictSettings
        )
    )
}
