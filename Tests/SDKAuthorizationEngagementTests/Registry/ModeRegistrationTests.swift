import Foundation
import SDKAuthorizationTesting
import EngagementTestSupport
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationModeKit
@testable import SDKAuthorizationEngagement

/// What a registry accepts from the modes registered with it: no mode takes over a plain Exponea
/// file through a vendor spelling of an Engagement key, two modes may own keys of one name, and a
/// name is registered once (a second registration is a clear error, never a silent replacement).
@Suite("Modes registered by name: keys of their own, and one registration a name", .hangLimit)
struct ModeRegistrationTests {
    struct PartnerProvider: AuthorizationProvider {
        func credential(for context: AuthorizationContext) async throws -> Credential { .bearer("partner-token") }
    }

    /// A partner mode whose vendor spells its switch as Exponea's own `advancedAuthEnabled`.
    struct TakeoverMode: NamedProviderFactory {
        static let providerName = "Partner.Mode"
        static var settingKeys: [ModeSettingKey] {
            [ModeSettingKey("partnerEnabled", type: .bool, meaning: "Turns the partner mode on.",
                            vendorSpellings: [.init(["advancedAuthEnabled"], vendor: "Partner", choosesMode: true)])]
        }
        func makeProvider(for context: ProviderFactoryContext) throws -> any AuthorizationProvider { PartnerProvider() }
    }

    /// A mode whose vendor dictionary is named as an Engagement key.
    struct DictionaryTakeoverMode: NamedProviderFactory {
        static let providerName = "Partner.Nested"
        static var settingKeys: [ModeSettingKey] {
            [ModeSettingKey("partnerURL", type: .url, meaning: "Where.", vendorSpellings: [.init(["providerName", "url"], vendor: "Partner")])]
        }
        func makeProvider(for context: ProviderFactoryContext) throws -> any AuthorizationProvider { PartnerProvider() }
    }

    struct VendorAMode: NamedProviderFactory {
        static let providerName = "VendorA.Mode"
        static var settingKeys: [ModeSettingKey] {
            [ModeSettingKey("region", type: .string, required: true, meaning: "The vendor's region."),
             ModeSettingKey("vendorEnabled", type: .bool, meaning: "On.", vendorSpellings: [.init(["Vendor", "Enable"], vendor: "Vendor", choosesMode: true)])]
        }
        func makeProvider(for context: ProviderFactoryContext) throws -> any AuthorizationProvider { PartnerProvider() }
    }

    struct VendorBMode: NamedProviderFactory {
        static let providerName = "VendorB.Mode"
        static var settingKeys: [ModeSettingKey] {
            [ModeSettingKey("region", type: .url, meaning: "The vendor's regional server."),
             ModeSettingKey("vendorEnabled", type: .bool, meaning: "On.", vendorSpellings: [.init(["Vendor", "Enable"], vendor: "Vendor", choosesMode: true)])]
        }
        func makeProvider(for context: ProviderFactoryContext) throws -> any AuthorizationProvider { PartnerProvider() }
    }

    private static let plain = #"{"projectToken": "p1", "baseURL": "https://api.example.com", "authorization": "Token k1""#

    private func read(_ members: String, _ registry: ProviderRegistry) throws(ConfigurationError) -> AuthorizationConfiguration {
        try AuthorizationConfiguration(data: Data((Self.plain + (members.isEmpty ? "" : ", " + members) + "}").utf8), format: .json, registry: registry)
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

    // MARK: A vendor spelling is never another product's key

    @Test func aVendorSpellingThatIsAnEngagementKeyIsRefusedSoAPlainExponeaFileNeverChoosesThePartnerMode() throws {
        let registry = ProviderRegistry()
        registry.register(ExampleAuthProvider.self, as: "ExponeaAuthProvider")
        registry.register(TakeoverMode())
        let expected = #"The provider registry refuses to start: the mode Partner.Mode cannot be registered: its key "partnerEnabled" has the vendor spelling "advancedAuthEnabled" ('Partner'), which is an Engagement key of every configuration file; a vendor spelling cannot be another product's key."#
        // A plain Exponea file with advanced auth on and no providerName: it never reaches the partner mode.
        #expect(message { _ = try read(#""advancedAuthEnabled": true"#, registry) } == expected)
        // Nor does a configuration made in code, whether advanced auth is on or off.
        let sink = RecordingDiagnosticsSink()
        #expect(message {
            _ = try AuthorizedHTTPClient(configuration: engagementConfiguration(advancedAuthEnabled: true), registry: registry,
                                         transport: RecordingTransport(), diagnostics: sink)
        } == expected)
        #expect(message {
            _ = try AuthorizedHTTPClient(configuration: engagementConfiguration(advancedAuthEnabled: false), registry: registry,
                                         transport: RecordingTransport(), diagnostics: sink)
        } == expected)
    }

    @Test func aVendorDictionaryNamedAsAnEngagementKeyIsRefused() throws {
        let registry = ProviderRegistry()
        registry.register(DictionaryTakeoverMode())
        #expect(message { _ = try read("", registry) }
            == #"The provider registry refuses to start: the mode Partner.Nested cannot be registered: its key "partnerURL" has the vendor spelling "providerName.url" ('Partner'), which is an Engagement key of every configuration file; a vendor spelling cannot be another product's key."#)
    }

    @Test func aModeKeyNamedAsAnEngagementKeyIsRefused() throws {
        let registry = ProviderRegistry()
        registry.register(name: "Partner.Keyed", settingKeys: [ModeSettingKey("baseURL", type: .url, meaning: "Where.")]) { _ in PartnerProvider() }
        #expect(message { _ = try read("", registry) }
            == #"The provider registry refuses to start: the mode Partner.Keyed cannot be registered: its key "baseURL" is an Engagement key of every configuration file; a mode cannot own it."#)
    }

    @Test func aModeOwningAnEngagementKeyIsRefusedBeforeAnyProviderIsMadeWithTheRegistryInTheKit() throws {
        let made = Locked(0)
        let registry = ProviderRegistry()
        registry.register(name: "Partner.Keyed", settingKeys: [ModeSettingKey("projectToken", type: .string, meaning: "Which project.")]) { _ in
            made.withLock { $0 += 1 }
            return PartnerProvider()
        }
        // The kit's registry itself refuses nothing: the key is Engagement's to reserve.
        #expect(message { try registry.checkRegistrations() } == nil)
        let expected = #"The provider registry refuses to start: the mode Partner.Keyed cannot be registered: its key "projectToken" is an Engagement key of every configuration file; a mode cannot own it."#
        let configuration = try engagementConfiguration(advancedAuthEnabled: true, providerLookup: .implicitName("Partner.Keyed"))
        #expect(message {
            _ = try AuthorizedHTTPClient(configuration: configuration, registry: registry, transport: RecordingTransport(),
                                         diagnostics: RecordingDiagnosticsSink())
        } == expected)
        #expect(message { _ = try read(#""advancedAuthEnabled": true, "providerName": "Partner.Keyed""#, registry) } == expected)
        #expect(made.withLock { $0 } == 0)
    }

    @Test func aModeOwningAnEngagementKeyRegisteredAfterStartIsRefusedAtTheNextReload() async throws {
        let registry = ProviderRegistry()
        registry.register(ExampleAuthProvider.self, as: "ExponeaAuthProvider")
        let client = try AuthorizedHTTPClient(configuration: engagementConfiguration(advancedAuthEnabled: true), registry: registry,
                                              transport: RecordingTransport(), diagnostics: RecordingDiagnosticsSink())
        registry.register(name: "Partner.Keyed", settingKeys: [ModeSettingKey("baseURL", type: .url, meaning: "Where.")]) { _ in PartnerProvider() }
        await #expect(throws: ConfigurationError.self) { try await client.identityDidChange() }
        #expect(client.provider == nil)
    }

    // MARK: Two modes may own keys of one name

    @Test func twoModesOwningAKeyOfOneNameEachReadItForTheFileThatChoosesThem() throws {
        let registry = ProviderRegistry()
        registry.register(VendorAMode())
        registry.register(VendorBMode())
        let a = try read(#""advancedAuthEnabled": true, "providerName": "VendorA.Mode", "region": "eu""#, registry)
        #expect(a.modeSettings == ModeSettings(["region": .string("eu")]))
        let b = try read(#""advancedAuthEnabled": true, "providerName": "VendorB.Mode", "region": "https://eu.vendor.example""#, registry)
        #expect(b.modeSettings == ModeSettings(["region": .url(try #require(URL(string: "https://eu.vendor.example")))]))
        // Each mode's own check still applies to the file that chooses it.
        #expect(message { _ = try read(#""advancedAuthEnabled": true, "providerName": "VendorB.Mode", "region": true"#, registry) }
            == "The configuration key 'region' must be a URL string.")
        #expect(message { _ = try read(#""advancedAuthEnabled": true, "providerName": "VendorA.Mode", "region": true"#, registry) }
            == "The configuration key 'region' must be a string.")
        #expect(message { _ = try read(#""advancedAuthEnabled": true, "providerName": "VendorA.Mode""#, registry) } == "The configuration key 'region' is required.")
        // A file choosing neither still may not carry the key.
        #expect(message { _ = try read(#""region": "eu""#, registry) }
            == "The configuration key 'region' is invalid: it applies only to the mode VendorA.Mode; set providerName to VendorA.Mode or remove it.")
    }

    @Test func aSwitchTwoModesShareChoosesTheOneProviderNameNamesAndIsRefusedAlone() throws {
        let registry = ProviderRegistry()
        registry.register(VendorAMode())
        registry.register(VendorBMode())
        let b = try read(#""Vendor": {"Enable": true}, "providerName": "VendorB.Mode""#, registry)
        #expect(b.providerLookup == .implicitName("VendorB.Mode"))
        #expect(b.advancedAuthEnabled)
        #expect(message { _ = try read(#""Vendor": {"Enable": true}, "region": "eu""#, registry) }
            == "The configuration key 'Vendor.Enable' is invalid: it turns on the modes VendorA.Mode and VendorB.Mode; set providerName to the one meant.")
    }

    @Test func oneModeRegisteredUnderTwoNamesReadsAFileChoosingEither() throws {
        let registry = ProviderRegistry()
        registry.register(VendorAMode())
        registry.register(VendorAMode(), under: "VendorA.Alias")
        for name in ["VendorA.Mode", "VendorA.Alias"] {
            let configuration = try read(#""advancedAuthEnabled": true, "providerName": "\#(name)", "region": "eu""#, registry)
            #expect(configuration.modeSettings == ModeSettings(["region": .string("eu")]), "\(name)")
            _ = try AuthorizedHTTPClient(configuration: configuration, registry: registry, transport: RecordingTransport(), diagnostics: RecordingDiagnosticsSink())
        }
    }

    // MARK: A name is registered once

    @Test func aNameRegisteredTwiceIsRefusedWithAClearErrorNotReplaced() throws {
        let registry = ProviderRegistry()
        registry.register(ExampleAuthProvider.self, as: "ExponeaAuthProvider")
        registry.register(name: "ExponeaAuthProvider") { _ in PartnerProvider() }
        let expected = "The provider registry refuses to start: ExponeaAuthProvider is registered twice (the class EngagementTestSupport.ExampleAuthProvider, then a provider factory); unregister the first to replace it, or register the second under another name."
        let sink = RecordingDiagnosticsSink()
        #expect(message {
            _ = try AuthorizedHTTPClient(configuration: engagementConfiguration(advancedAuthEnabled: true), registry: registry,
                                         transport: RecordingTransport(), diagnostics: sink)
        } == expected)
        #expect(message { _ = try read(#""advancedAuthEnabled": true"#, registry) } == expected)
        #expect((try? read("", registry)) == nil)
    }

    @Test func aModeRegisteredTwiceUnderItsNameIsRefused() throws {
        let registry = ProviderRegistry()
        registry.register(VendorAMode())
        registry.register(VendorAMode())
        #expect(message { _ = try read("", registry) }
            == "The provider registry refuses to start: VendorA.Mode is registered twice (the mode SDKAuthorizationEngagementTests.ModeRegistrationTests.VendorAMode, then the mode SDKAuthorizationEngagementTests.ModeRegistrationTests.VendorAMode); unregister the first to replace it, or register the second under another name.")
    }

    @Test func unregisteringFirstReplacesARegistration() throws {
        let registry = ProviderRegistry()
        registry.register(name: "ExponeaAuthProvider") { _ in PartnerProvider() }
        registry.unregister("ExponeaAuthProvider")
        registry.register(ExampleAuthProvider.self, as: "ExponeaAuthProvider")
        _ = try AuthorizedHTTPClient(configuration: engagementConfiguration(advancedAuthEnabled: true), registry: registry,
                                     transport: RecordingTransport(), diagnostics: RecordingDiagnosticsSink())
    }

    // MARK: "did you mean" is bounded

    @Test func didYouMeanOverThousandsOfKeysAndUnknownKeysDoesBoundedWork() throws {
        // 19,263 keys of one mode (a 1 MiB description's worth) and a file naming 2,000 unknown keys.
        let keys = (0..<19_263).map { ModeSettingKey("partnerKey\($0)", type: .string, meaning: "k") }
        let modeKeys = ModeKeys(keys.map { (providerName: "Partner.Big", key: $0) }, schemaKeys: AuthorizationConfiguration.fileKeys, modeKey: "providerName")
        var values: [String: JWTClaimValue] = [:]
        for index in 0..<2_000 { values["partnerKey\(index)x"] = .string("v") }
        var work = 0
        var thrown: ConfigurationError?
        do {
            try modeKeys.refuseUnknownKeys(in: values, fileName: "authorization.json", work: &work)
        } catch {
            thrown = error
        }
        #expect(thrown?.keys?.count == 2_000)
        // The first unknown key still gets its hint.
        #expect(thrown?.message.contains("'partnerKey0x': did you mean 'partnerKey0'?") == true)
        // Bounded: at most maximumNames names, each looking at every candidate once and comparing at
        // most maximumCandidates of them with a banded distance (5 cells a letter, 64 letters).
        let candidates = keys.count + AuthorizationConfiguration.fileKeys.count
        let bound = NearestName.maximumNames * (candidates + NearestName.maximumCandidates * 5 * NearestName.maximumLength)
        #expect(work > 0)
        #expect(work <= bound, "work \(work), bound \(bound)")
        // The unbounded reader compared each of the 2,000 keys with every candidate: far more.
        #expect(bound < 2_000 * candidates)
    }

    @Test func nearestNameFindsACloseNameAndNothingFar() {
        var nearest = NearestName(candidates: ["signatureAuthenticationEnabled", "tokenExchangeURL", "projectToken"])
        #expect(nearest.nearest(to: "tokenExchangeUrl") == "tokenExchangeURL")
        #expect(nearest.nearest(to: "projectTokn") == "projectToken")
        #expect(nearest.nearest(to: "somethingElse") == nil)
        #expect(nearest.nearest(to: String(repeating: "x", count: 300)) == nil)
        var work = 0
        #expect(NearestName.distance(Array("kitten".unicodeScalars), Array("sitting".unicodeScalars), limit: 2, work: &work) == nil)
        #expect(NearestName.distance(Array("kitten".unicodeScalars), Array("sittin".unicodeScalars), limit: 2, work: &work) == 2)
        #expect(NearestName.distance(Array("flaw".unicodeScalars), Array("lawn".unicodeScalars), limit: 2, work: &work) == 2)
    }
}
