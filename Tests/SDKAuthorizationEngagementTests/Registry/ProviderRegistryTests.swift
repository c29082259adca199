import Foundation
import SDKAuthorizationTesting
import EngagementTestSupport
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationModeKit
@testable import SDKAuthorizationEngagement

@Suite("Provider lookup by name and its documented diagnostics", .hangLimit)
struct ProviderRegistryTests {
    /// Creates a client and returns the configuration error and everything logged, at any level. The
    /// six documented lookup messages are logged at error level as well as thrown (SPEC.md); every
    /// other start-up error is only thrown, so an app that prints it shows it once.
    private func failure(
        _ lookup: ProviderLookup,
        registry: ProviderRegistry = ProviderRegistry()
    ) throws -> (ConfigurationError?, [String]) {
        let sink = RecordingDiagnosticsSink()
        do {
            _ = try AuthorizedHTTPClient(
                configuration: engagementConfiguration(advancedAuthEnabled: true, providerLookup: lookup),
                registry: registry,
                transport: RecordingTransport(),
                diagnostics: sink
            )
            return (nil, sink.diagnostics.map(\.message))
        } catch let error as ConfigurationError {
            return (error, sink.diagnostics.map(\.message))
        }
    }

    @Test func implicitNameWithNothingRegisteredFailsWithTheiOSMessage() throws {
        let (error, logged) = try failure(.default)
        #expect(error == .advancedAuthEnabledWithoutProvider)
        #expect(error?.message == "Advanced authorization flag has been enabled without provider")
        #expect(logged == ["Advanced authorization flag has been enabled without provider"])
    }

    @Test func aMisspeltBuiltInNameKeepsTheDocumentedMessageAndSaysWhichNameItMeans() throws {
        let (error, logged) = try failure(.implicitName("SDKAuthorization.IDTokenRefrsh"))
        let expected = #"Advanced authorization flag has been enabled without provider ("SDKAuthorization.IDTokenRefrsh" is not registered; did you mean "SDKAuthorization.IDTokenRefresh"?)"#
        #expect(error?.code == .advancedAuthEnabledWithoutProvider)
        #expect(error?.message == expected)
        #expect(logged == [expected])
        let (registered, _) = try failure(.registeredClassName("sdkauthorization.signature"))
        #expect(registered?.code == .registeredClassNotFound)
        #expect(registered?.message == #"Registered sdkauthorization.signature class has not been found ("sdkauthorization.signature" is not registered; did you mean "SDKAuthorization.Signature"?)"#)
        let (short, _) = try failure(.implicitName("TokenExchange"))
        #expect(short?.message.hasSuffix(#"did you mean "SDKAuthorization.TokenExchange"?)"#) == true)
    }

    @Test func aBuiltInNameTheRegistryDoesNotHoldSaysWhichProductToLinkAndWhatToRegister() throws {
        // Linked or not, a built-in mode is found only once registered: no type-name table, no run-time lookup.
        let (error, logged) = try failure(.implicitName(BuiltInProviderName.idTokenRefresh), registry: ProviderRegistry())
        let expected = #"Advanced authorization flag has been enabled without provider ("SDKAuthorization.IDTokenRefresh" is a mode in the product SDKAuthorizationIDToken: link SDKAuthorizationIDToken to the app's target and register IDTokenRefreshMode(refresh:) with the registry)"#
        #expect(error?.code == .advancedAuthEnabledWithoutProvider)
        #expect(error?.message == expected)
        #expect(logged == [expected])
        let products = Dictionary(uniqueKeysWithValues: BuiltInProviderName.modes.map { ($0.providerName, $0.product) })
        #expect(products[BuiltInProviderName.signature] == "SDKAuthorizationSignature")
        #expect(products[BuiltInProviderName.tokenExchange] == "SDKAuthorizationTokenExchange")
        #expect(products["ExponeaAuthProvider"] == nil)
    }

    @Test func aNameFarFromEveryBuiltInNameGetsNoHint() throws {
        for name in ["ExponeaAuthProvider", "MyApp.ExampleAuthProvider", "SDKAuthorization.Other", String(repeating: "x", count: 300)] {
            #expect(ProviderRegistry().hint(forUnresolvedName: name, otherModes: BuiltInProviderName.modes) == nil, "\(name)")
        }
        var work = 0
        #expect(NearestName.distance(Array("abc".unicodeScalars), Array("abd".unicodeScalars), limit: 2, work: &work) == 1)
        #expect(NearestName.distance(Array("".unicodeScalars), Array("ab".unicodeScalars), limit: 2, work: &work) == 2)
        #expect(NearestName.distance(Array("abc".unicodeScalars), Array("xyz".unicodeScalars), limit: 2, work: &work) == nil)
    }

    @Test func implicitNameBoundToANonNSObjectClassFailsWithTheiOSMessage() throws {
        let registry = ProviderRegistry()
        registry.register(PlainSwiftAuthProvider.self, as: "ExponeaAuthProvider")
        let (error, logged) = try failure(.default, registry: registry)
        #expect(error?.message == "Class ExponeaAuthProvider does not conform to NSObject")
        #expect(logged == ["Class ExponeaAuthProvider does not conform to NSObject"])
    }

    @Test func implicitNameBoundToANonConformingClassFailsWithTheiOSMessage() throws {
        let registry = ProviderRegistry()
        registry.register(NotAnAuthProvider.self, as: "ExponeaAuthProvider")
        let (error, logged) = try failure(.default, registry: registry)
        #expect(error?.message == "Class ExponeaAuthProvider does not conform to AuthorizationProviderType")
        #expect(logged == ["Class ExponeaAuthProvider does not conform to AuthorizationProviderType"])
    }

    @Test func customImplicitNameAppearsInTheMessages() throws {
        let registry = ProviderRegistry()
        registry.register(NotAnAuthProvider.self, as: "AcmeAuthProvider")
        let (error, _) = try failure(.implicitName("AcmeAuthProvider"), registry: registry)
        #expect(error?.message == "Class AcmeAuthProvider does not conform to AuthorizationProviderType")
    }

    @Test func registeredConventionWithNoClassNamedFailsWithTheAndroidMessage() throws {
        let (error, logged) = try failure(.registeredClassName(nil))
        #expect(error?.message == "Advanced auth has been enabled but provider has not been found")
        #expect(logged == ["Advanced auth has been enabled but provider has not been found"])
    }

    @Test(arguments: ["MyApp.FournisseurÉtoilé", "Käse.Provider", "Appli.提供者", "提供者", "MyApp." + String(repeating: "P", count: 250)])
    func lookupMessagesNameTheRealClassExactlyInAnyScriptUpToTheAcceptedLength(name: String) throws {
        let (error, logged) = try failure(.registeredClassName(name))
        #expect(error?.message == "Registered \(name) class has not been found")
        #expect(logged == ["Registered \(name) class has not been found"])
    }

    @Test func theLongestAcceptedNameAppearsWholeInEveryLookupMessage() throws {
        // As long as a configuration accepts, in letters of more than one byte: nothing is cut.
        let name = "Käse." + String(repeating: "ä", count: ConfigurationError.maximumProviderNameLength - 5)
        #expect(name.unicodeScalars.count == ConfigurationError.maximumProviderNameLength)
        _ = try engagementConfiguration(advancedAuthEnabled: true, providerLookup: .registeredClassName(name))
        #expect(ConfigurationError.registeredClassNotFound(name: name).message == "Registered \(name) class has not been found")
        #expect(ConfigurationError.registeredClassDoesNotImplement(name: name).message
            == "Registered \(name) class has to implement SDKAuthorization.AuthorizationProviderType")
        #expect(ConfigurationError.providerIsNotNSObject(name: name).message == "Class \(name) does not conform to NSObject")
        #expect(ConfigurationError.providerDoesNotConform(name: name).message == "Class \(name) does not conform to AuthorizationProviderType")
        #expect(ConfigurationError.providerCreationFailed(name: name, reason: "r").message
            == "The authorization provider registered as \(name) could not be created: r")
    }

    @Test func aNameOneLongerThanTheLongestAcceptedIsRefusedByTheConfiguration() {
        let name = "Käse." + String(repeating: "ä", count: ConfigurationError.maximumProviderNameLength - 4)
        #expect(throws: ConfigurationError.invalidValue(key: "providerName", reason: "\(LogText.escaped(name, limit: 64)) is not a type name")) {
            try engagementConfiguration(advancedAuthEnabled: true, providerLookup: .registeredClassName(name))
        }
    }

    @Test func aNameWithABidiOverrideIsEscapedInTheMessageSoItCannotHideItsText() {
        #expect(LogText.typeName("Exponea\u{202E}redivorP") == "Exponea\\u{202e}redivorP")
        #expect(LogText.typeName("A\u{2028}B\u{7}") == "A\\u{2028}B\\u{7}")
    }

    @Test(arguments: [0x0, 0xA, 0xD, 0x1B, 0x7F, 0x85, 0x2028, 0x2029, 0x061C, 0x200E, 0x200F,
                      0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069] as [UInt32])
    func everyControlAndBidiCharacterIsEscapedInTheLookupMessages(code: UInt32) throws {
        let scalar = try #require(Unicode.Scalar(code))
        let name = "Käse.\(Character(scalar))Provider"
        let escaped = "Käse.\\u{\(String(code, radix: 16))}Provider"
        #expect(ConfigurationError.registeredClassNotFound(name: name).message == "Registered \(escaped) class has not been found")
        #expect(ConfigurationError.providerDoesNotConform(name: name).message == "Class \(escaped) does not conform to AuthorizationProviderType")
        #expect(ConfigurationError.providerCreationFailed(name: name, reason: "r").message
            == "The authorization provider registered as \(escaped) could not be created: r")
    }

    @Test func registeredClassThatDoesNotExistFailsWithTheAndroidMessage() throws {
        let (error, logged) = try failure(.registeredClassName("MyApp.ExampleAuthProvider"))
        #expect(error?.message == "Registered MyApp.ExampleAuthProvider class has not been found")
        #expect(logged == ["Registered MyApp.ExampleAuthProvider class has not been found"])
    }

    @Test func registeredClassThatDoesNotConformFailsWithTheAndroidMessageAndItsSpace() throws {
        let name = String(reflecting: NotAnAuthProvider.self)
        let (error, logged) = try failure(.registeredClassName(name))
        let expected = "Registered \(name) class has to implement SDKAuthorization.AuthorizationProviderType"
        #expect(error?.message == expected)
        #expect(logged == [expected])
    }

    @Test func nsClassFromStringFindsAModuleQualifiedSwiftProviderClass() async throws {
        let name = String(reflecting: ExampleAuthProvider.self)
        #expect(name == "EngagementTestSupport.ExampleAuthProvider")
        let transport = RecordingTransport()
        let client = try AuthorizedHTTPClient(
            configuration: engagementConfiguration(advancedAuthEnabled: true, providerLookup: .registeredClassName(name)),
            transport: transport,
            diagnostics: RecordingDiagnosticsSink()
        )
        _ = try await client.send(.appInboxFetch)
        #expect(transport.requests.first?.value(forHeader: "Authorization") == "Bearer \(ExampleAuthProvider.token)")
    }

    @Test func androidConventionAcceptsANonNSObjectProvider() async throws {
        let transport = RecordingTransport()
        let client = try AuthorizedHTTPClient(
            configuration: engagementConfiguration(
                advancedAuthEnabled: true,
                providerLookup: .registeredClassName(String(reflecting: PlainSwiftAuthProvider.self))
            ),
            transport: transport,
            diagnostics: RecordingDiagnosticsSink()
        )
        _ = try await client.send(.appInboxMarkAsRead)
        #expect(transport.requests.first?.value(forHeader: "Authorization") == "Bearer plain.swift.token")
    }

    @Test func explicitRegistrationUnderTheImplicitNameIsUsed() async throws {
        let registry = ProviderRegistry()
        registry.register(ExampleAuthProvider.self, as: "ExponeaAuthProvider")
        let transport = RecordingTransport()
        let client = try AuthorizedHTTPClient(
            configuration: engagementConfiguration(advancedAuthEnabled: true),
            registry: registry,
            transport: transport,
            diagnostics: RecordingDiagnosticsSink()
        )
        _ = try await client.send(.appInboxFetch)
        #expect(transport.requests.first?.value(forHeader: "Authorization") == "Bearer \(ExampleAuthProvider.token)")
    }

    @Test func advancedAuthDisabledNeverLooksUpAProviderEvenAfterIdentityChange() async throws {
        let registry = ProviderRegistry()
        let client = try AuthorizedHTTPClient(
            configuration: engagementConfiguration(advancedAuthEnabled: false),
            registry: registry,
            transport: RecordingTransport(),
            diagnostics: RecordingDiagnosticsSink()
        )
        try await client.identityDidChange()
        try await client.identityDidChange()
        #expect(registry.lookupCount == 0)
        #expect(client.provider == nil)
    }

    @Test func identityChangeCreatesANewInstanceOfTheProviderClass() async throws {
        final class InstanceNumberingAuthProvider: NSObject, AuthorizationProviderType {
            static let instances = Locked(0)
            let number: Int
            required override init() { number = Self.instances.withLock { $0 += 1; return $0 } }
            func getAuthorizationToken() -> String? { "instance.\(number).token" }
        }
        let registry = ProviderRegistry()
        registry.register(InstanceNumberingAuthProvider.self, as: "ExponeaAuthProvider")
        let transport = RecordingTransport()
        let client = try AuthorizedHTTPClient(
            configuration: engagementConfiguration(advancedAuthEnabled: true),
            registry: registry,
            transport: transport,
            diagnostics: RecordingDiagnosticsSink()
        )
        _ = try await client.send(.appInboxFetch)
        try await client.identityDidChange()
        _ = try await client.send(.appInboxFetch)
        #expect(registry.lookupCount == 2)
        #expect(transport.requests.map { $0.value(forHeader: "Authorization") } == ["Bearer instance.1.token", "Bearer instance.2.token"])
    }

    @Test func identityChangeKeepsANativeProviderAndTellsIt() async throws {
        let provider = ScriptedProvider(.token("native.jwt.token"))
        let registry = registry(with: provider)
        let client = try AuthorizedHTTPClient(
            configuration: engagementConfiguration(advancedAuthEnabled: true),
            registry: registry,
            transport: RecordingTransport(),
            diagnostics: RecordingDiagnosticsSink()
        )
        try await client.identityDidChange()
        #expect(provider.identityChangeCount == 1)
        #expect(client.provider as? ScriptedProvider === provider)
        #expect(registry.lookupCount == 1)
    }

    @Test func identityChangeThatCannotReloadFailsAndLeavesNoProvider() async throws {
        let registry = ProviderRegistry()
        registry.register(ExampleAuthProvider.self, as: "ExponeaAuthProvider")
        let sink = RecordingDiagnosticsSink()
        let client = try AuthorizedHTTPClient(
            configuration: engagementConfiguration(advancedAuthEnabled: true),
            registry: registry,
            transport: RecordingTransport(),
            diagnostics: sink
        )
        registry.unregister("ExponeaAuthProvider")
        await #expect(throws: ConfigurationError.advancedAuthEnabledWithoutProvider) {
            try await client.identityDidChange()
        }
        await #expect(throws: RequestError.noProvider(endpoint: .appInboxFetch)) {
            try await client.send(.appInboxFetch)
        }
        // Thrown to the caller of identityDidChange, and logged at error level as SPEC.md says.
        #expect(sink.diagnostics.map(\.message) == ["Advanced authorization flag has been enabled without provider"])
    }

    @Test func aFactoryFoundByNameIsToldTheBaseURLAndTheEngagementConfigurationItLoads() throws {
        let registry = ProviderRegistry()
        let seen = Locked<(URL?, String?)>((nil, nil))
        registry.register(name: "ExponeaAuthProvider") { context in
            seen.withLock { $0 = (context.baseURL, context.configuration?.projectToken) }
            return ScriptedProvider(.token("a.b.c"))
        }
        let configuration = try engagementConfiguration(advancedAuthEnabled: true, providerLookup: .default)
        _ = try AuthorizedHTTPClient(configuration: configuration, registry: registry, transport: RecordingTransport(), diagnostics: RecordingDiagnosticsSink())
        let (baseURL, projectToken) = seen.withLock { $0 }
        #expect(baseURL == configuration.baseURL)
        #expect(projectToken == configuration.projectToken)
    }

    @Test func factoryErrorBecomesAProviderCreationFailure() throws {
        struct Boom: Error, CustomStringConvertible { var description: String { "keychain locked" } }
        let registry = ProviderRegistry()
        registry.register(name: "ExponeaAuthProvider") { _ in throw Boom() }
        let (error, _) = try failure(.default, registry: registry)
        #expect(error == .providerCreationFailed(name: "ExponeaAuthProvider", reason: "keychain locked"))
    }

    @Test func aFactoryErrorCannotForgeALogLineThroughTheCreationFailure() throws {
        struct Forged: Error, CustomStringConvertible { var description: String { "locked\nERROR fake line\u{202E}" } }
        let registry = ProviderRegistry()
        registry.register(name: "Käse.Provider") { _ in throw Forged() }
        let (error, logged) = try failure(.implicitName("Käse.Provider"), registry: registry)
        let message = "The authorization provider registered as Käse.Provider could not be created: locked\\u{a}ERROR fake line\\u{202e}"
        #expect(error?.message == message)
        #expect(logged.isEmpty)
    }
}

