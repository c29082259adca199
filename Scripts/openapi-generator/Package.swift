// swift-tools-version: 6.1
import PackageDescription

// Only for Scripts/generate-openapi-client: builds swift-openapi-generator's command-line tool in
// its own scratch folder (.build-openapi-generator), so neither Samples nor CI ever builds the
// generator, OpenAPIKit or Yams. Nothing depends on this package.
let package = Package(
    name: "openapi-generator-tool",
    platforms: [.macOS(.v13)],   // swift-openapi-generator's own minimum
    dependencies: [
        .package(url: "https://github.com/apple/swift-openapi-generator.git", exact: "1.14.3"),
    ],
    targets: []
)
