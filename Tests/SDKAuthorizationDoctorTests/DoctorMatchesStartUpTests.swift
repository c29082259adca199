import Foundation
import Testing
import TestSupport
import SDKAuthorization
@testable import SDKAuthorizationEngagement
@testable import SDKAuthorizationDoctor

/// The app's side of the doctor's new verdicts: a client made the way the app makes it, with the
/// registry the app has, refuses to start with the very message the doctor reports.
@Suite("The doctor's provider verdicts are what the app does at start", .hangLimit)
struct DoctorMatchesStartUpTests {
    final class PlainProvider: AuthorizationProviderType {
        init() {}
        func getAuthorizationToken() -> String? { nil }
    }

    private struct Silent: DiagnosticsSink {
        func record(_ diagnostic: Diagnostic) {}
    }

    /// The message a client made from `file` with `registry` fails with, as the app would log it.
    private func appError(_ file: String, registry: ProviderRegistry) throws -> String? {
        let configuration = try AuthorizationConfiguration(data: Data(file.utf8), format: .json)
        do {
            _ = try AuthorizedHTTPClient(configuration: configuration, registry: registry, diagnostics: Silent())
            return nil
        } catch {
            return error.message
        }
    }

    private func doctorErrors(_ package: ScratchPackage, _ arguments: String...) -> [String] {
        Doctor.run(["--package-directory", package.url.path] + arguments, now: Date(timeIntervalSince1970: 0), currentDirectory: package.url)
            .findings.filter { $0.severity == .error }.map(\.message)
    }

    @Test func aMisspeltBuiltInName() throws {
        let file = Files.advanced(#""providerName": "SDKAuthorization.signatur""#)
        let package = try ScratchPackage()
        try package.write("authorization.json", file)
        let app = try #require(try appError(file, registry: ProviderRegistry()))
        #expect(doctorErrors(package, "authorization.json") == [app])
    }

    @Test func aBuiltInNameWhoseProductIsNotLinked() throws {
        let file = Files.advanced(#""providerConvention": "registeredClass", "providerName": "SDKAuthorization.IDTokenRefresh""#)
        let package = try ScratchPackage()
        try package.write("authorization.json", file)
        // The app links no mode: its run-time lookup finds none of their types.
        let app = try #require(try appError(file, registry: ProviderRegistry(typeLookup: { _ in nil })))
        #expect(doctorErrors(package, "--linked-products", "SDKAuthorizationEngagement", "authorization.json") == [app])
    }

    @Test func aProviderClassThatIsNotAnNSObject() throws {
        let file = Files.advanced("")
        let package = try ScratchPackage()
        try package.write("Sources/App/sdkauth-providers.json", #"{"providers": [{"name": "ExponeaAuthProvider", "type": "App.PlainProvider", "mode": "customerToken"}]}"#)
        try package.write("Sources/App/PlainProvider.swift", "final class PlainProvider: AuthorizationProviderType { func getAuthorizationToken() -> String? { nil } }")
        try package.write("Sources/App/authorization.json", file)
        // What the generated registerManifestProviders() does: register the class under the name.
        let registry = ProviderRegistry()
        registry.register(PlainProvider.self, as: "ExponeaAuthProvider")
        let app = try #require(try appError(file, registry: registry))
        #expect(doctorErrors(package) == [app])
    }
}
