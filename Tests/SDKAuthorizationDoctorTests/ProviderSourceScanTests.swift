import Foundation
import Testing
import TestSupport
@testable import SDKAuthorizationDoctor

@Suite("The doctor looks for a manifest's types in the target's sources", .hangLimit)
struct ProviderSourceScanTests {
    private func run(manifest: String, sources: [String: String]) throws -> DoctorReport {
        let package = try ScratchPackage()
        try package.write("Sources/App/sdkauth-providers.json", manifest)
        try package.write("Sources/App/authorization.json", Files.advanced(""))
        for (path, text) in sources { try package.write("Sources/App/\(path)", text) }
        return Doctor.run(["--package-directory", package.url.path], now: Date(timeIntervalSince1970: 0), currentDirectory: package.url)
    }

    private func entry(_ type: String, mode: String = "customerToken") -> String {
        #"{"providers": [{"name": "ExponeaAuthProvider", "type": "\#(type)", "mode": "\#(mode)"}]}"#
    }

    private func warnings(_ report: DoctorReport) -> [Finding] { report.findings.filter { $0.severity == .warning } }

    /// The warnings about the manifest (not the configuration file's, which for a mode without a
    /// description says what the doctor cannot check).
    private func manifestWarnings(_ report: DoctorReport) -> [Finding] {
        warnings(report).filter { $0.file?.hasPrefix("Sources/App/sdkauth-providers.json") == true }
    }

    @Test func aDeclaredConformingClassGivesNoWarning() throws {
        let report = try run(manifest: entry("App.ExampleAuthProvider"), sources: [
            "Providers/ExampleAuthProvider.swift": "final class ExampleAuthProvider: NSObject, AuthorizationProviderType {\n}",
        ])
        #expect(warnings(report).isEmpty)
        #expect(report.exitStatus == 0)
    }

    @Test func conformanceInAnExtensionCounts() throws {
        let report = try run(manifest: entry("App.Outer.PartnerMode", mode: "factory"), sources: [
            "Outer.swift": "enum Outer { enum PartnerMode {} }\nextension Outer.PartnerMode: SDKAuthorization.NamedProviderFactory {\n}",
        ])
        #expect(manifestWarnings(report).isEmpty)
    }

    @Test func aTypeTheSourcesDoNotDeclareIsAWarningOnTheManifest() throws {
        let report = try run(manifest: entry("App.ExampleAuthProvider"), sources: [
            "App.swift": "final class ExampleAuthProviderTests {}\n// class ExampleAuthProviderX {",
        ])
        #expect(warnings(report) == [Finding(.warning, file: "Sources/App/sdkauth-providers.json:1", key: "providers[0].type",
                                             "App.ExampleAuthProvider, declared for ExponeaAuthProvider, is not declared as a class, struct, enum or actor in the sources of App")])
        #expect(report.exitStatus == 0)
    }

    @Test func aTypeWithoutTheModesProtocolIsAWarning() throws {
        let report = try run(manifest: entry("App.ExampleAuthProvider", mode: "factory"), sources: [
            "App.swift": "final class ExampleAuthProvider: NSObject, AuthorizationProviderType {}",
        ])
        #expect(manifestWarnings(report).map(\.message) == [
            "App.ExampleAuthProvider, declared for ExponeaAuthProvider with mode factory, does not conform to NamedProviderFactory as far as the sources of App show",
        ])
    }

    @Test func aTypeInAnotherModuleIsNotLookedFor() throws {
        let report = try run(manifest: entry("ProviderKit.ExampleAuthProvider"), sources: ["App.swift": ""])
        #expect(warnings(report).isEmpty)
    }

    @Test func aManifestIsReportedOnceForAllTheFilesItServes() throws {
        let package = try ScratchPackage()
        try package.write("Sources/App/sdkauth-providers.json", #"{"providers": 1}"#)
        try package.write("Sources/App/authorization.json", Files.good)
        try package.write("Sources/App/staging-authorization.json", Files.good)
        let report = Doctor.run(["--package-directory", package.url.path], now: Date(timeIntervalSince1970: 0), currentDirectory: package.url)
        #expect(report.findings.map(\.file) == [
            "Sources/App/sdkauth-providers.json:1:15", "Sources/App/authorization.json", "Sources/App/staging-authorization.json",
        ])
    }
}
