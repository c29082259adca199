import Foundation
import Testing
import TestSupport
@testable import SDKAuthorizationDoctor

@Suite("Finding a package's configuration files", .hangLimit)
struct ConfigurationFilesTests {
    @Test(arguments: ["authorization.json", "Authorization.plist", "SDKAuthorization.plist", "staging-authorization.JSON", "sdkauth.json", "sdkauth.plist"])
    func theseNamesAreConfigurationFiles(name: String) {
        #expect(ConfigurationFiles.isConfigurationFileName(name))
    }

    @Test(arguments: ["sdkauth-providers.json", "authorization.swift", "config.json", "authorization.json.bak", "Info.plist", "sdkauth.yaml"])
    func theseNamesAreNot(name: String) {
        #expect(!ConfigurationFiles.isConfigurationFileName(name))
    }

    @Test func hiddenFoldersAndNestedPackagesAreSkipped() throws {
        let package = try ScratchPackage()
        try package.write("Sources/App/authorization.json", Files.good)
        try package.write(".build/checkouts/Dep/authorization.json", "{")
        try package.write(".build-doctor/authorization.json", "{")
        try package.write(".git/authorization.json", "{")
        try package.write("Samples/Package.swift", "")
        try package.write("Samples/Sources/Demo/authorization.json", "{")
        try package.write("Sources/App/sdkauth-providers.json", Files.manifest("ExponeaAuthProvider"))
        let found = ConfigurationFiles.find(in: package.url).map { ConfigurationFiles.displayPath($0, root: package.url) }
        #expect(found == ["Sources/App/authorization.json"])
    }

    @Test func aPackageWithoutConfigurationFilesSaysSoAndSucceeds() throws {
        let package = try ScratchPackage()
        try package.write("Sources/App/App.swift", "")
        let report = Doctor.run(["--package-directory", package.url.path], now: Date(timeIntervalSince1970: 0), currentDirectory: package.url)
        #expect(report.exitStatus == 0)
        #expect(report.findings.count == 1)
        #expect(report.findings.first?.severity == .note)
        #expect(report.findings.first?.message.hasPrefix("No authorization configuration files in ") == true)
        #expect(!report.findings.description.contains("invalid"))
    }

    @Test func theNearestManifestWins() throws {
        let package = try ScratchPackage()
        try package.write("sdkauth-providers.json", Files.manifest("A"))
        let inner = try package.write("Sources/App/sdkauth-providers.json", Files.manifest("B"))
        let file = try package.write("Sources/App/Resources/authorization.json", Files.good)
        #expect(ConfigurationFiles.manifestURL(for: file, root: package.url)?.standardizedFileURL == inner.standardizedFileURL)
    }

    @Test func noManifestIsLookedForAboveThePackage() throws {
        let outer = try ScratchPackage()
        try outer.write("sdkauth-providers.json", Files.manifest("A"))
        let file = try outer.write("Package/authorization.json", Files.good)
        #expect(ConfigurationFiles.manifestURL(for: file, root: outer.url.appendingPathComponent("Package")) == nil)
        #expect(ConfigurationFiles.manifestURL(for: file, root: nil) == nil)
    }
}
