// swift-tools-version: 6.0
import PackageDescription

// A sample integrator: an app's package that links SDKAuthorization and uses both of its plugins.
// - RegisterAuthorizationProviders (build tool): Sources/IntegratorApp/sdkauth-providers.json names the
//   app's provider class; the build generates its registration, and a misspelt type fails the build.
// - authorization-doctor (command): `swift package --package-path Samples/Integrator authorization-doctor`
//   checks Sources/IntegratorApp/authorization.json with the framework's own rules and that manifest.
// Scripts/check-integrator-sample builds and runs it and runs the doctor on it (part of Scripts/test-all).
// An app that installs the framework by URL names it `package: "swift-sdk-authorization"`; here it
// is the working tree two folders up, whose package identity is that folder's name.
let framework = Context.packageDirectory.split(separator: "/").dropLast(2).last.map(String.init) ?? "SDKAuthorization"

let package = Package(
    name: "IntegratorSample",
    platforms: [.macOS(.v13)],
    dependencies: [.package(path: "../..")],
    targets: [
        .executableTarget(
            name: "IntegratorApp",
            dependencies: [
                .product(name: "SDKAuthorization", package: framework),
                .product(name: "SDKAuthorizationEngagement", package: framework),
            ],
            exclude: ["authorization.json"],
            plugins: [.plugin(name: "RegisterAuthorizationProviders", package: framework)]
        ),
    ],
    swiftLanguageModes: [.v6]
)
