import Foundation
import Testing
import TestSupport
import SDKAuthorization
@testable import SDKAuthorizationModeKit
@testable import SDKAuthorizationEngagement
@testable import SDKAuthorizationDoctor

/// A class of this module, as an app's own provider class is one of the app's module.
final class ExampleAuthProvider: NSObject, AuthorizationProviderType {
    override init() {}
    func getAuthorizationToken() -> String? { nil }
}

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

    /// The app's own mode, with a required key.
    struct PartnerMode: StandaloneProviderFactory {
        static let providerName = "App.Partner"
        static var settingKeys: [ModeSettingKey] { [ModeSettingKey("partnerURL", type: .url, required: true, meaning: "Where.")] }
        init() {}
        func makeProvider(for context: ProviderFactoryContext) throws -> any AuthorizationProvider { PartnerProvider() }
    }

    struct PartnerProvider: AuthorizationProvider {
        func credential(for context: AuthorizationContext) async throws -> Credential { throw CancellationError() }
    }

    /// The message a client made from the file at `url`, read with `registry`, fails with.
    private func appError(contentsOf url: URL, registry: ProviderRegistry) -> String? {
        do {
            let configuration = try AuthorizationConfiguration(contentsOf: url, registry: registry)
            _ = try AuthorizedHTTPClient(configuration: configuration, registry: registry, diagnostics: Silent())
            return nil
        } catch {
            return error.message
        }
    }

    private func report(_ package: ScratchPackage, _ arguments: String...) -> DoctorReport {
        Doctor.run(["--package-directory", package.url.path] + arguments, now: Date(timeIntervalSince1970: 0), currentDirectory: package.url)
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

    @Test func aBuiltInNameWhoseProductIsNotLinkedInATargetWithAManifestIsHintedOnce() throws {
        let file = Files.advanced(#""providerName": "SDKAuthorization.IDTokenRefresh""#)
        let package = try ScratchPackage()
        try package.write("Sources/App/sdkauth-providers.json", Files.manifest("ExponeaAuthProvider"))
        try package.write("Sources/App/authorization.json", file)
        let registry = ProviderRegistry(typeLookup: { _ in nil })
        registry.register(PlainProvider.self, as: "ExponeaAuthProvider")
        let app = try #require(try appError(file, registry: registry))
        #expect(doctorErrors(package, "--linked-products", "SDKAuthorizationEngagement") == [app])
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

    // MARK: Modes the doctor cannot see

    @Test func anAppsOwnModeTheManifestRegistersWithoutADescriptionIsNeverOkForAMissingRequiredKey() throws {
        let package = try ScratchPackage()
        try package.write("Sources/App/sdkauth-providers.json", #"{"providers": [{"name": "App.Partner", "type": "App.PartnerMode", "mode": "factory"}]}"#)
        try package.write("Sources/App/PartnerMode.swift", "struct PartnerMode: StandaloneProviderFactory {}")
        let url = try package.write("Sources/App/authorization.json", Files.advanced(#""providerName": "App.Partner""#))
        // What the generated registerManifestProviders() does.
        let registry = ProviderRegistry()
        registry.register(PartnerMode(), under: "App.Partner")
        #expect(appError(contentsOf: url, registry: registry) == "The configuration key 'partnerURL' is required. (in 'authorization.json')")
        let findings = report(package).findings.filter { $0.file == "Sources/App/authorization.json" }
        // Not "ok": the doctor says what it cannot check.
        #expect(findings == [Finding(.warning, file: "Sources/App/authorization.json", key: "providerName",
                                     "App.Partner is the mode App.PartnerMode that sdkauth-providers.json registers, and the doctor has no description of it (sdkauth-mode.json under that name) and cannot load its code: its keys are not checked here (a required key missing, a wrong type or a value the mode refuses fails at start, not here); describe the mode (NamedProviderFactory.modeDescription(product:), passed with --mode-description) to have them checked")])
    }

    @Test func aDescribedModeTheManifestRegistersUnderAnotherNameIsNeverOkForAMissingRequiredKey() throws {
        let package = try ScratchPackage()
        try package.write("Sources/App/sdkauth-providers.json", #"{"providers": [{"name": "Partner", "type": "PartnerKit.PartnerMode", "mode": "factory"}]}"#)
        let url = try package.write("Sources/App/authorization.json", Files.advanced(#""providerName": "Partner""#))
        try package.write("partner/sdkauth-mode.json", PartnerMode.modeDescription(product: "PartnerKit"))
        let registry = ProviderRegistry()
        registry.register(PartnerMode(), under: "Partner")
        #expect(appError(contentsOf: url, registry: registry) == "The configuration key 'partnerURL' is required. (in 'authorization.json')")
        let findings = report(package, "--mode-description", "partner/sdkauth-mode.json").findings.filter { $0.file == "Sources/App/authorization.json" }
        #expect(findings == [Finding(.warning, file: "Sources/App/authorization.json", key: "providerName",
                                     "Partner is the mode PartnerKit.PartnerMode that sdkauth-providers.json registers, and the doctor has no description of it (sdkauth-mode.json under that name) and cannot load its code: its keys are not checked here (a required key missing, a wrong type or a value the mode refuses fails at start, not here); the description partner/sdkauth-mode.json names its mode App.Partner: if that is this mode, register it under that name")])
    }

    @Test func aPartnerModeWhoseSwitchIsSpeltAdvancedAuthEnabledIsRefusedByTheDoctorAsByTheApp() throws {
        struct TakeoverMode: NamedProviderFactory {
            static let providerName = "Partner.Mode"
            static var settingKeys: [ModeSettingKey] {
                [ModeSettingKey("partnerEnabled", type: .bool, meaning: "On.",
                                vendorSpellings: [.init(["advancedAuthEnabled"], vendor: "Partner", choosesMode: true)])]
            }
            func makeProvider(for context: ProviderFactoryContext) throws -> any AuthorizationProvider { PartnerProvider() }
        }
        let package = try ScratchPackage()
        let url = try package.write("authorization.json", Files.advanced(""))
        try package.write("partner/sdkauth-mode.json", TakeoverMode.modeDescription(product: "PartnerKit"))
        let registry = ProviderRegistry()
        registry.register(PlainProvider.self, as: "ExponeaAuthProvider")
        registry.register(TakeoverMode())
        #expect(appError(contentsOf: url, registry: registry)?.hasPrefix("The provider registry refuses to start: the mode Partner.Mode cannot be registered") == true)
        let errors = report(package, "--mode-description", "partner/sdkauth-mode.json", "authorization.json").findings.filter { $0.severity == .error }
        #expect(errors.map(\.description) == [
            #"partner/sdkauth-mode.json:5:77: error: key "partnerEnabled": "advancedAuthEnabled" is an Engagement key of every configuration file; a vendor spelling cannot be another product's key"#,
            "authorization.json: error: not checked: a mode description (--mode-description) is invalid",
        ])
    }

    // MARK: Classes the doctor cannot see

    @Test func aClassTheDoctorCannotSeeIsNeverSaidToBeMissing() throws {
        let file = Files.advanced(#""providerConvention": "registeredClass", "providerName": "MySDKApp.ExampleAuthProvider""#)
        let package = try ScratchPackage()
        try package.write("authorization.json", file)
        // The app's run-time lookup finds its class, and the client starts.
        let app = ProviderRegistry(typeLookup: { $0 == "MySDKApp.ExampleAuthProvider" ? ExampleAuthProvider.self : nil })
        #expect(try appError(file, registry: app) == nil)
        let findings = report(package, "authorization.json").findings
        #expect(findings == [Finding(.warning, file: "authorization.json", key: "providerName",
                                     #"The doctor cannot see the class MySDKApp.ExampleAuthProvider: without sdkauth-providers.json it cannot see the providers the app registers in code or the classes its run-time lookup finds; if the app has none, it fails at start with "Registered MySDKApp.ExampleAuthProvider class has not been found"; declare it in sdkauth-providers.json to have it checked"#)])
        #expect(!findings.contains { $0.message.hasPrefix("Registered") })
    }

    @Test func aMisspeltClassTheManifestRegistersGetsTheAppsDidYouMean() throws {
        let file = Files.advanced(#""providerConvention": "registeredClass", "providerName": "SDKAuthorizationDoctorTests.ExampleAuthProvidr""#)
        let package = try ScratchPackage()
        try package.write("Sources/SDKAuthorizationDoctorTests/sdkauth-providers.json",
                          #"{"providers": [{"name": "ExponeaAuthProvider", "type": "SDKAuthorizationDoctorTests.ExampleAuthProvider", "mode": "customerToken"}]}"#)
        try package.write("Sources/SDKAuthorizationDoctorTests/Provider.swift", "final class ExampleAuthProvider: NSObject, AuthorizationProviderType {}")
        try package.write("Sources/SDKAuthorizationDoctorTests/authorization.json", file)
        let registry = ProviderRegistry()
        registry.register(ExampleAuthProvider.self, as: "ExponeaAuthProvider")
        let app = try #require(try appError(file, registry: registry))
        #expect(app == #"Registered SDKAuthorizationDoctorTests.ExampleAuthProvidr class has not been found ("SDKAuthorizationDoctorTests.ExampleAuthProvidr" is not registered; did you mean "SDKAuthorizationDoctorTests.ExampleAuthProvider"?)"#)
        #expect(doctorErrors(package) == [app])
    }

    // MARK: Issue 37: diagnostics an outside mode's author can act on

    /// An outside mode: one required string key, one integer key with a default and a range.
    struct AudienceMode: NamedProviderFactory {
        static let providerName = "Partner.Audience"
        static var settingKeys: [ModeSettingKey] {
            [ModeSettingKey("audience", type: .string, required: true, meaning: "Who the token is for."),
             ModeSettingKey("maxTokenAge", type: .integer, default: .integer(600), range: 60...3600, meaning: "Seconds a token is used at most.")]
        }
        func makeProvider(for context: ProviderFactoryContext) throws -> any AuthorizationProvider { PartnerProvider() }
    }

    private func audienceRegistry() -> ProviderRegistry {
        let registry = ProviderRegistry()
        registry.register(AudienceMode())
        return registry
    }

    @Test func anIntegerSettingInRangeIsOkForTheDoctorAsTheAppStarts() throws {
        let package = try ScratchPackage()
        let url = try package.write("authorization.json", Files.advanced(#""providerName": "Partner.Audience", "audience": "api", "maxTokenAge": 600"#))
        try package.write("partner/sdkauth-mode.json", AudienceMode.modeDescription(product: "PartnerKit"))
        #expect(appError(contentsOf: url, registry: audienceRegistry()) == nil)
        #expect(doctorErrors(package, "--mode-description", "partner/sdkauth-mode.json", "authorization.json") == [])
    }

    @Test(arguments: [
        (#""maxTokenAge": 59"#, "The configuration key 'maxTokenAge' is invalid: 59 is outside the range; expected an integer from 60 to 3600. (in 'authorization.json')"),
        (#""maxTokenAge": 600.5"#, "The configuration key 'maxTokenAge' is invalid: 600.5 is not a whole number; expected an integer from 60 to 3600. (in 'authorization.json')"),
        (#""maxTokenAge": "600""#, "The configuration key 'maxTokenAge' must be an integer from 60 to 3600. (in 'authorization.json')"),
    ])
    func anIntegerSettingOutOfRangeOrOfTheWrongTypeIsTheAppsErrorInTheDoctor(member: String, expected: String) throws {
        let package = try ScratchPackage()
        let url = try package.write("authorization.json", Files.advanced(#""providerName": "Partner.Audience", "audience": "api", "# + member))
        try package.write("partner/sdkauth-mode.json", AudienceMode.modeDescription(product: "PartnerKit"))
        #expect(appError(contentsOf: url, registry: audienceRegistry()) == expected)
        #expect(doctorErrors(package, "--mode-description", "partner/sdkauth-mode.json", "authorization.json") == [expected])
    }

    @Test func anOutsideModeTheAppDidNotRegisterIsNamedByTheDoctorAsByTheApp() throws {
        let package = try ScratchPackage()
        let url = try package.write("authorization.json", Files.advanced(#""providerName": "Partner.Audience", "audience": "api""#))
        let expected = "The mode Partner.Audience is not registered: the file chooses it (providerName) and gives it the key 'audience', which only a registered mode declares; register the mode with the registry that reads the file (ProviderRegistry.register(_:)), or correct providerName. (in 'authorization.json')"
        // The app forgot registry.register(AudienceMode()); the doctor was given no description of it.
        #expect(appError(contentsOf: url, registry: ProviderRegistry()) == expected)
        let findings = report(package, "authorization.json").findings.filter { $0.severity == .error }
        #expect(findings == [Finding(.error, file: "authorization.json", key: "providerName", expected)])
    }

    // MARK: A described mode the app does not link: the built-in modes' hints, the same path

    /// The app's registry that knows the outside mode from its description only (its product not linked).
    private func describingRegistry() -> ProviderRegistry {
        let registry = ProviderRegistry()
        registry.describe(ModeDescription(providerName: AudienceMode.providerName, settingKeys: AudienceMode.settingKeys, product: "PartnerKit"))
        return registry
    }

    /// The doctor's errors for `authorization.json`, told of the outside mode and that the app links no mode's product.
    private func doctorErrorsWithTheModeUnlinked(_ package: ScratchPackage) throws -> [String] {
        try package.write("partner/sdkauth-mode.json", AudienceMode.modeDescription(product: "PartnerKit"))
        return doctorErrors(package, "--linked-products", "SDKAuthorizationEngagement", "--mode-description", "partner/sdkauth-mode.json", "authorization.json")
    }

    @Test(arguments: [
        (#""providerName": "Partner.Audience""#,
         #"Advanced authorization flag has been enabled without provider ("Partner.Audience" is a mode in the product PartnerKit: link PartnerKit to the app's target and register the mode with the registry)"#),
        (#""providerConvention": "registeredClass", "providerName": "Partner.Audience""#,
         #"Registered Partner.Audience class has not been found ("Partner.Audience" is a mode in the product PartnerKit: link PartnerKit to the app's target and register the mode with the registry)"#),
        (#""providerName": "Partner.Audiense""#,
         #"Advanced authorization flag has been enabled without provider ("Partner.Audiense" is not registered; did you mean "Partner.Audience"?)"#),
        (#""audience": "api""#,
         "Unknown configuration keys: 'audience'. (in 'authorization.json'; 'audience' is a key of the mode Partner.Audience, which is not registered: register the mode (product PartnerKit) with the registry that reads the file)"),
    ])
    func aDescribedModeWhoseProductIsNotLinkedIsHintedByTheDoctorAsByTheApp(members: String, expected: String) throws {
        let package = try ScratchPackage()
        let url = try package.write("authorization.json", Files.advanced(members))
        #expect(appError(contentsOf: url, registry: describingRegistry()) == expected)
        #expect(try doctorErrorsWithTheModeUnlinked(package) == [expected])
    }

    @Test func aDescribedModeWhoseProductIsLinkedIsOkForTheDoctorAsForTheAppThatRegistersIt() throws {
        let package = try ScratchPackage()
        let url = try package.write("authorization.json", Files.advanced(#""providerName": "Partner.Audience", "audience": "api""#))
        try package.write("partner/sdkauth-mode.json", AudienceMode.modeDescription(product: "PartnerKit"))
        #expect(appError(contentsOf: url, registry: audienceRegistry()) == nil)
        #expect(doctorErrors(package, "--linked-products", "SDKAuthorizationEngagement,PartnerKit", "--mode-description", "partner/sdkauth-mode.json", "authorization.json") == [])
    }

    @Test func aKeyBesideAClassTheManifestRegistersIsAnUnknownKeyForTheDoctorAsForTheApp() throws {
        let package = try ScratchPackage()
        try package.write("Sources/App/sdkauth-providers.json", Files.manifest("App.Provider"))
        let url = try package.write("Sources/App/authorization.json", Files.advanced(#""providerName": "App.Provider", "audience": "api""#))
        // What the generated registerManifestProviders() does: the name is registered, so the key is simply unknown.
        let registry = ProviderRegistry()
        registry.register(ExampleAuthProvider.self, as: "App.Provider")
        let app = try #require(appError(contentsOf: url, registry: registry))
        #expect(app == "Unknown configuration keys: 'audience'. (in 'authorization.json')")
        #expect(doctorErrors(package) == [app])
    }

    @Test func aModesKeyWithAdvancedAuthOffIsAnErrorInTheDoctorNotOk() throws {
        let package = try ScratchPackage()
        let url = try package.write("authorization.json", #"{"projectToken": "p1", "baseURL": "https://api.example.com", "authorization": "Token k1", "providerName": "Partner.Audience", "audience": "api"}"#)
        try package.write("partner/sdkauth-mode.json", AudienceMode.modeDescription(product: "PartnerKit"))
        let expected = "The configuration key 'audience' is invalid: it would be ignored: it is a setting of the mode Partner.Audience, which is used only with advancedAuthEnabled true; set advancedAuthEnabled to true, or remove the key. (in 'authorization.json')"
        #expect(appError(contentsOf: url, registry: audienceRegistry()) == expected)
        let findings = report(package, "--mode-description", "partner/sdkauth-mode.json", "authorization.json").findings
        #expect(findings == [Finding(.error, file: "authorization.json", key: "audience", expected)])
    }

    @Test func aConfigurationWithAByteOrderMarkIsOkForTheDoctorAsTheAppStarts() throws {
        let package = try ScratchPackage()
        let url = try package.write("authorization.json", "\u{FEFF}" + Files.good)
        #expect(try Data(contentsOf: url).prefix(3) == Data([0xEF, 0xBB, 0xBF]))
        #expect(appError(contentsOf: url, registry: ProviderRegistry()) == nil)
        #expect(report(package, "authorization.json").findings.map(\.severity) == [.note])
        #expect(report(package, "authorization.json").findings.first?.message.hasPrefix("ok: ") == true)
    }

    @Test func aModeDescriptionWithAByteOrderMarkIsReadAsTheManifestIs() throws {
        let text = AudienceMode.modeDescription(product: "PartnerKit")
        let described = try ModeDescription.parse(Array(("\u{FEFF}" + text).utf8)).get()
        #expect(described.providerName == "Partner.Audience")
        #expect(described.settingKeys.map(\.name) == ["audience", "maxTokenAge"])
        #expect(described.settingKeys.last?.range == 60...3600)
        #expect(described.settingKeys.last?.defaultValue == .integer(600))
    }
}
