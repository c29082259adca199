import Foundation
import SDKAuthorizationTesting
import Testing
import TestSupport
import SDKAuthorization
import SDKAuthorizationModeKit
@testable import SDKAuthorizationEngagement

/// A mode the registry is told of (`describe(_:)`) but does not hold gets the hints a built-in
/// mode gets, through the same path: which product to link and what to register, "did you mean",
/// and the mode a file key belongs to.
@Suite("A described mode gets the built-in modes' hints", .hangLimit)
struct DescribedModeHintsTests {
    struct AudienceProvider: AuthorizationProvider {
        func credential(for context: AuthorizationContext) async throws -> Credential { .bearer("audience-token") }
    }

    /// An outside mode: its registration needs an argument from the app.
    struct AudienceMode: NamedProviderFactory {
        static let providerName = "Partner.Audience"
        static var settingKeys: [ModeSettingKey] {
            [ModeSettingKey("audience", type: .string, required: true, meaning: "Who the token is for."),
             ModeSettingKey("partnerRegion", type: .string, meaning: "The region.",
                            vendorSpellings: [.init(["Partner", "Region"], vendor: "Partner")])]
        }
        static var modeDescription: ModeDescription {
            ModeDescription(providerName: providerName, settingKeys: settingKeys, product: "PartnerKit", registration: "AudienceMode(session:)")
        }
        let session: String
        func makeProvider(for context: ProviderFactoryContext) throws -> any AuthorizationProvider { AudienceProvider() }
    }

    private static let plain = #""projectToken": "p1", "baseURL": "https://api.example.com", "authorization": "Token k1""#

    /// The app's registry: the outside mode described, not registered (the app forgot it).
    private static func describing() -> ProviderRegistry {
        let registry = ProviderRegistry()
        registry.describe(AudienceMode.modeDescription)
        return registry
    }

    private func read(_ members: String, registry: ProviderRegistry) throws -> AuthorizationConfiguration {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("described-mode-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("authorization.json")
        try Data(("{" + Self.plain + (members.isEmpty ? "" : ", " + members) + "}").utf8).write(to: url)
        return try AuthorizationConfiguration(contentsOf: url, registry: registry)
    }

    private func start(_ configuration: AuthorizationConfiguration, registry: ProviderRegistry) throws {
        _ = try AuthorizedHTTPClient(configuration: configuration, registry: registry, transport: RecordingTransport(),
                                     diagnostics: RecordingDiagnosticsSink())
    }

    private func inCode(_ lookup: ProviderLookup) throws -> AuthorizationConfiguration {
        try AuthorizationConfiguration(projectToken: "p1", baseURL: "https://api.example.com", authorization: "Token k1",
                                       advancedAuthEnabled: true, providerLookup: lookup)
    }

    private func message(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch let error as ConfigurationError {
            return error.message
        } catch {
            return "\(error)"
        }
    }

    static let linkAndRegister = #"("Partner.Audience" is a mode in the product PartnerKit: link PartnerKit to the app's target and register AudienceMode(session:) with the registry)"#

    @Test func aDescribedModeChosenInCodeSaysWhichProductToLinkAndWhatToRegister() throws {
        let registry = Self.describing()
        #expect(message { try start(inCode(.implicitName("Partner.Audience")), registry: registry) }
            == "Advanced authorization flag has been enabled without provider " + Self.linkAndRegister)
        #expect(message { try start(inCode(.registeredClassName("Partner.Audience")), registry: registry) }
            == "Registered Partner.Audience class has not been found " + Self.linkAndRegister)
        // The built-in mode, through the same path, in the same words but "built-in".
        #expect(message { try start(inCode(.implicitName(BuiltInProviderName.signature)), registry: registry) }
            == #"Advanced authorization flag has been enabled without provider ("SDKAuthorization.Signature" is a mode in the product SDKAuthorizationSignature: link SDKAuthorizationSignature to the app's target and register SignatureMode() with the registry)"#)
    }

    @Test func aDescribedModeChosenFromAFileSaysWhichProductToLinkAndWhatToRegister() throws {
        let registry = Self.describing()
        let configuration = try read(#""advancedAuthEnabled": true, "providerName": "Partner.Audience""#, registry: registry)
        #expect(message { try start(configuration, registry: registry) } == "Advanced authorization flag has been enabled without provider " + Self.linkAndRegister)
    }

    @Test func aModeThatDoesNotSayItsRegistrationIsToldToRegisterTheMode() throws {
        let registry = ProviderRegistry()
        registry.describe(ModeDescription(providerName: "Partner.Plain", product: "PlainKit"))
        #expect(message { try start(inCode(.implicitName("Partner.Plain")), registry: registry) }
            == #"Advanced authorization flag has been enabled without provider ("Partner.Plain" is a mode in the product PlainKit: link PlainKit to the app's target and register the mode with the registry)"#)
    }

    @Test func aNameCloseToADescribedModeSaysDidYouMean() throws {
        let registry = Self.describing()
        #expect(message { try start(inCode(.implicitName("Partner.Audiense")), registry: registry) }
            == #"Advanced authorization flag has been enabled without provider ("Partner.Audiense" is not registered; did you mean "Partner.Audience"?)"#)
        #expect(message { try start(inCode(.registeredClassName("partner.audience")), registry: registry) }
            == #"Registered partner.audience class has not been found ("partner.audience" is not registered; did you mean "Partner.Audience"?)"#)
        // Its last part alone, as a built-in name's.
        #expect(message { try start(inCode(.implicitName("Audience")), registry: registry) }
            == #"Advanced authorization flag has been enabled without provider ("Audience" is not registered; did you mean "Partner.Audience"?)"#)
        // Nothing described: no hint.
        #expect(message { try start(inCode(.implicitName("Partner.Audiense")), registry: ProviderRegistry()) }
            == "Advanced authorization flag has been enabled without provider")
    }

    @Test(arguments: [
        (#""audience": "api""#, "audience"),
        (#""Partner": {"Region": "eu"}"#, "Partner"),
    ])
    func aFileKeyOfADescribedModeNamesTheModeToRegister(member: String, key: String) throws {
        let expected = "Unknown configuration keys: '\(key)'. (in 'authorization.json'; '\(key)' is a key of the mode Partner.Audience, which is not registered: register AudienceMode(session:) (product PartnerKit) with the registry that reads the file)"
        #expect(message { _ = try read(#""advancedAuthEnabled": true, "# + member, registry: Self.describing()) } == expected)
        // Chosen by providerName too: the key is still the described mode's.
        #expect(message { _ = try read(#""advancedAuthEnabled": true, "providerName": "Partner.Audience", "# + member, registry: Self.describing()) } == expected)
    }

    @Test func aDescribedModeThatIsAlsoRegisteredResolvesAndOwnsItsKeys() throws {
        let registry = Self.describing()
        registry.register(AudienceMode(session: "s"))
        let configuration = try read(#""advancedAuthEnabled": true, "providerName": "Partner.Audience", "audience": "api""#, registry: registry)
        #expect(configuration.modeSettings == ModeSettings(["audience": .string("api")]))
        #expect(message { try start(configuration, registry: registry) } == nil)
    }

    @Test func describedModesAreListedByNameAndALaterDescriptionReplacesAnEarlier() {
        let registry = ProviderRegistry()
        registry.describe(ModeDescription(providerName: "Partner.Zeta", product: "ZetaKit"))
        registry.describe(ModeDescription(providerName: "Partner.Alpha", product: "OldKit"))
        registry.describe(ModeDescription(providerName: "Partner.Alpha", product: "AlphaKit"))
        #expect(registry.describedModes.map(\.providerName) == ["Partner.Alpha", "Partner.Zeta"])
        #expect(registry.describedModes.first?.product == "AlphaKit")
        #expect(!registry.resolves("Partner.Alpha"))
    }

    @Test func aModeTypeDescribesItselfWithItsNameKeysAndModule() {
        struct Bare: NamedProviderFactory {
            static let providerName = "Partner.Bare"
            static let settingKeys = [ModeSettingKey("bareURL", type: .url, meaning: "Where.")]
            func makeProvider(for context: ProviderFactoryContext) throws -> any AuthorizationProvider { AudienceProvider() }
        }
        #expect(Bare.modeDescription.providerName == "Partner.Bare")
        #expect(Bare.modeDescription.settingKeys.map(\.name) == ["bareURL"])
        #expect(Bare.modeDescription.product == "SDKAuthorizationEngagementTests")
        #expect(Bare.modeDescription.registration == nil)
        #expect(AudienceMode.modeDescription.registration == "AudienceMode(session:)")
    }
}
