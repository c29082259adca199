import Foundation
import SDKAuthorizationTesting
import Testing
import TestSupport
// Not @testable: what an outside tool (a doctor of its own, another configuration schema) sees.
import SDKAuthorization
import SDKAuthorizationModeKit

/// The mode kit's `ProviderRegistry` through its public API only: a tool registers a mode it knows
/// by its description, asks what is registered and gets the registry's own hints; a schema reserves
/// its keys. The registry knows no vendor: no key is refused for being a schema's until a schema says so.
@Suite("The registry in the mode kit, through its public API", .hangLimit)
struct ProviderRegistryPublicAPITests {
    struct DescribedProvider: AuthorizationProvider {
        func credential(for context: AuthorizationContext) async throws -> Credential { .bearer("described-token") }
    }

    static let keys = [
        ModeSettingKey("partnerURL", type: .url, required: true, meaning: "Where the token is fetched."),
        ModeSettingKey("maxTokenAge", type: .integer, default: .integer(600), range: 60...3600, meaning: "Seconds a token is kept."),
    ]

    private func context(_ settings: [String: ModeSettings.Value]) throws -> ProviderFactoryContext {
        ProviderFactoryContext(baseURL: try #require(URL(string: "https://api.example.com")), configuration: "a tool's configuration",
                               clock: ManualClock(), diagnostics: RecordingDiagnosticsSink(), observer: nil,
                               modeSettings: ModeSettings(settings))
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

    @Test func aToolRegistersADescribedModeByItsKeysAndItsSettingsAreCheckedBeforeTheFactoryRuns() throws {
        let registry = ProviderRegistry()
        let seen = Locked<[ModeSettings]>([])
        registry.register(name: "Partner.Described", settingKeys: Self.keys) { context in
            seen.withLock { $0.append(context.modeSettings) }
            return DescribedProvider()
        }
        #expect(registry.isRegistered("Partner.Described"))
        #expect(!registry.isRegistered("Partner.Other"))
        #expect(registry.modeSettingKeys.map { "\($0.providerName) \($0.key.name)" } == ["Partner.Described partnerURL", "Partner.Described maxTokenAge"])

        let url = try #require(URL(string: "https://partner.example/token"))
        let resolved = try registry.resolve("Partner.Described", context: context(["partnerURL": .url(url)]))
        guard case .provider(let provider)? = resolved else {
            Issue.record("expected the described mode's provider, got \(String(describing: resolved))")
            return
        }
        #expect(provider is DescribedProvider)
        // The default is filled in before the factory sees the settings.
        #expect(seen.withLock { $0 } == [ModeSettings(["partnerURL": .url(url), "maxTokenAge": .integer(600)])])

        // Refused settings never reach the factory.
        #expect(message { _ = try registry.resolve("Partner.Described", context: context([:])) } == "The configuration key 'partnerURL' is required.")
        #expect(message { _ = try registry.resolve("Partner.Described", context: context(["partnerURL": .url(url), "maxTokenAge": .integer(5)])) }
            == "The configuration key 'maxTokenAge' is invalid: 5 is outside the range; expected an integer from 60 to 3600.")
        #expect(seen.withLock { $0.count } == 1)
    }

    @Test func aDescribedModeUnderATakenNameIsRefusedForEveryConfiguration() throws {
        let registry = ProviderRegistry()
        registry.register(name: "Partner.Described", factory: { _ in DescribedProvider() })
        registry.register(name: "Partner.Described", settingKeys: Self.keys) { _ in DescribedProvider() }
        let expected = "The provider registry refuses to start: Partner.Described is registered twice (a provider factory, then a described mode); unregister the first to replace it, or register the second under another name."
        #expect(message { try registry.checkRegistrations() } == expected)
        #expect(message { _ = try registry.resolve("Partner.Described", context: context([:])) } == expected)
    }

    @Test func aNameNotFoundGetsDidYouMeanAmongTheRegistrysNamesAndTheToolsOwn() throws {
        let registry = ProviderRegistry()
        registry.register(name: "Partner.Described", settingKeys: Self.keys) { _ in DescribedProvider() }
        #expect(try registry.resolve("Partner.Describd", context: context([:])) == nil)
        #expect(registry.hint(forUnresolvedName: "Partner.Describd")
            == #""Partner.Describd" is not registered; did you mean "Partner.Described"?"#)
        // A name the app's registry holds and this one does not (the doctor knows the app's manifest).
        #expect(registry.hint(forUnresolvedName: "MyApp.ExampleAuthProvidr", otherNames: ["MyApp.ExampleAuthProvider"])
            == #""MyApp.ExampleAuthProvidr" is not registered; did you mean "MyApp.ExampleAuthProvider"?"#)
        #expect(registry.hint(forUnresolvedName: "Unrelated.Name") == nil)
        #expect(registry.hint(forUnresolvedName: "Unrelated.Name", modeSettings: ModeSettings(["audience": .string("api")]))
            == #""Unrelated.Name" is not registered, and the configuration gives it the mode setting 'audience': register the mode with the registry (ProviderRegistry.register(_:)) before the client starts"#)
    }

    @Test func aDescribedModeGetsTheSameHintsWhetherTheRegistryOrTheSchemaKnowsIt() throws {
        let partner = ModeDescription(providerName: "Partner.Token", settingKeys: Self.keys, product: "PartnerKit", registration: "PartnerTokenMode(session:)")
        let linkAndRegister = #""Partner.Token" is a mode in the product PartnerKit: link PartnerKit to the app's target and register PartnerTokenMode(session:) with the registry"#
        // Told to the registry, or passed by the schema that reads with it: the same words.
        let registry = ProviderRegistry()
        registry.describe(partner)
        #expect(try registry.resolve("Partner.Token", context: context([:])) == nil)
        #expect(registry.hint(forUnresolvedName: "Partner.Token") == linkAndRegister)
        #expect(ProviderRegistry().hint(forUnresolvedName: "Partner.Token", otherModes: [partner]) == linkAndRegister)
        // Mode settings given to it do not hide what to link.
        #expect(registry.hint(forUnresolvedName: "Partner.Token", modeSettings: ModeSettings(["partnerURL": .string("x")])) == linkAndRegister)
        #expect(registry.hint(forUnresolvedName: "Partner.Tokn") == #""Partner.Tokn" is not registered; did you mean "Partner.Token"?"#)
        #expect(registry.hint(forUnresolvedName: "token") == #""token" is not registered; did you mean "Partner.Token"?"#)
        // A mode of the framework's own products is called built-in.
        let builtIn = ModeDescription(providerName: "SDKAuthorization.Example", product: "SDKAuthorizationExample")
        #expect(ProviderRegistry().hint(forUnresolvedName: "SDKAuthorization.Example", otherModes: [builtIn])
            == #""SDKAuthorization.Example" is a mode in the product SDKAuthorizationExample: link SDKAuthorizationExample to the app's target and register the mode with the registry"#)
    }

    @Test func aDescriptionOwnsItsKeysAndItsVendorsTopLevelSpellings() {
        let mode = ModeDescription(providerName: "Partner.Token", settingKeys: [
            ModeSettingKey("partnerRegion", type: .string, meaning: "The region.", vendorSpellings: [.init(["Partner", "Region"], vendor: "Partner")]),
        ], product: "PartnerKit")
        #expect(mode.owns(fileKey: "partnerRegion"))
        #expect(mode.owns(fileKey: "Partner"))
        #expect(!mode.owns(fileKey: "Region"))
        #expect(!mode.owns(fileKey: "partnerregion"))
    }

    @Test func theRegistryRefusesNoKeyAsASchemasUntilTheSchemaReservesIt() throws {
        let registry = ProviderRegistry()
        registry.register(name: "Partner.Keyed", settingKeys: [ModeSettingKey("advancedAuthEnabled", type: .bool, meaning: "A switch.")]) { _ in
            DescribedProvider()
        }
        // The kit knows no vendor's keys.
        #expect(message { try registry.checkRegistrations() } == nil)
        #expect(message { try registry.checkModes(reserving: ["projectToken"], as: "a key of the schema") } == nil)
        #expect(message { try registry.checkModes(reserving: ["projectToken", "advancedAuthEnabled"], as: "a key of the schema") }
            == #"The provider registry refuses to start: the mode Partner.Keyed cannot be registered: its key "advancedAuthEnabled" is a key of the schema; a mode cannot own it."#)
    }

    @Test func aRegisteredClassResolvesToItsTypeForTheSchemaToJudge() throws {
        final class SomeClass {}
        let registry = ProviderRegistry()
        registry.register(SomeClass.self, as: "Some.Provider")
        guard case .type(let found)? = try registry.resolve("Some.Provider", context: context([:])) else {
            Issue.record("expected the registered class")
            return
        }
        #expect(ObjectIdentifier(found) == ObjectIdentifier(SomeClass.self))
        // A class is no mode: settings given to it are refused.
        #expect(message { _ = try registry.resolve("Some.Provider", context: context(["audience": .string("api")])) }
            == "Unknown configuration keys: 'audience'. ('audience' is not a setting of Some.Provider, which is not a registered mode)")
    }
}
