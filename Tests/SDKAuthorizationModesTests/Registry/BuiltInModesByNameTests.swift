import Foundation
import SDKAuthorizationTesting
import EngagementTestSupport
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationModeKit
@testable import SDKAuthorizationEngagement
@testable import SDKAuthorizationSignature
@testable import SDKAuthorizationTokenExchange
@testable import SDKAuthorizationIDToken

@Suite("The registered signature and token-exchange modes chosen by name, in code and from a file", .hangLimit)
struct BuiltInModesByNameTests {
    let clock = ManualClock()
    let sink = RecordingDiagnosticsSink()
    let signature = makeJWT(["sub": "user-42", "exp": 1_900_000_000])
    /// The app's registry: the built-in modes registered with what they need from the app.
    let registry: ProviderRegistry

    init() {
        registry = ProviderRegistry()
        registry.register(SignatureMode())
        registry.register(IDTokenRefreshMode(refresh: nil))
        let clock = self.clock
        registry.register(TokenExchangeMode(signer: .async { _ in
            let now = clock.now().timeIntervalSince1970
            return makeJWT(["iat": now, "exp": now + 300], header: ["alg": "HS256", "typ": "JWT"])
        }))
    }

    /// A configuration read from a JSON file of the project keys plus `keys` (raw JSON members),
    /// with `registry` (default the app's).
    func file(_ keys: String, registry: ProviderRegistry? = nil) throws -> AuthorizationConfiguration {
        try AuthorizationConfiguration(
            data: Data(#"{"projectToken": "project-1", "baseURL": "https://api.example.com", "authorization": "Token api-key-1"\#(keys.isEmpty ? "" : ", ")\#(keys)}"#.utf8),
            format: .json, registry: registry ?? self.registry
        )
    }

    func client(_ configuration: AuthorizationConfiguration, transport: RecordingTransport) throws -> AuthorizedHTTPClient {
        try AuthorizedHTTPClient(configuration: configuration, registry: registry, transport: transport, diagnostics: sink, clock: clock)
    }

    // MARK: Signature mode

    @Test func theSignatureModeIsChosenByNameFromAFileAndSendsTheUsersSignature() async throws {
        let configuration = try file(#""advancedAuthEnabled": true, "providerName": "SDKAuthorization.Signature""#)
        #expect(configuration.modeSettings.bool("signatureAuthenticationEnabled") == true)
        let transport = RecordingTransport()
        let client = try client(configuration, transport: transport)
        let authentication = try #require(client.provider as? SignatureAuthentication)
        #expect(authentication.headerName == "X-Braze-Auth-Signature")
        try authentication.changeUser("user-42", signature: signature)
        _ = try await client.send(.appInboxFetch)
        let request = try #require(transport.requests.first)
        #expect(request.value(forHeader: "X-Braze-Auth-Signature") == signature)
        #expect(request.value(forHeader: "Authorization") == nil)
    }

    @Test func theSignatureModeLoadedByNameReportsTheServersAuthenticationFailures() async throws {
        let configuration = try file(#""advancedAuthEnabled": true, "providerName": "SDKAuthorization.Signature""#)
        let transport = RecordingTransport(statusCode: 401, body: #"{"auth_error": {"error_code": 22, "reason": "expired"}, "user_id": "user-42"}"#)
        let client = try client(configuration, transport: transport)
        let authentication = try #require(client.provider as? SignatureAuthentication)
        let failures = Locked<[SignatureFailure]>([])
        let subscription = authentication.subscribeToFailures { failure in failures.withLock { $0.append(failure) } }
        defer { subscription.cancel() }
        try authentication.changeUser("user-42", signature: signature)
        _ = try? await client.send(.appInboxFetch)
        await authentication.failuresDelivered()
        let reported = failures.withLock { $0 }
        #expect(reported.map(\.errorCode.rawValue) == [22])
        #expect(reported.first?.userId == "user-42")
        #expect(reported.first?.signature == signature)
    }

    @Test(arguments: ["signatureAuthenticationEnabled", "EnableSDKAuthentication"])
    func signatureAuthenticationTurnedOffKeepsTheModeButSendsNoSignature(key: String) async throws {
        let configuration = try file(#""advancedAuthEnabled": true, "providerName": "SDKAuthorization.Signature", "\#(key)": false"#)
        #expect(configuration.modeSettings.bool("signatureAuthenticationEnabled") == false)
        let transport = RecordingTransport()
        let client = try client(configuration, transport: transport)
        let authentication = try #require(client.provider as? SignatureAuthentication)
        try authentication.changeUser("user-42", signature: signature)
        _ = try await client.send(.appInboxFetch)
        #expect(transport.requests.first?.value(forHeader: "X-Braze-Auth-Signature") == nil)
        #expect(authentication.description.hasSuffix("redacted, sending disabled)"))
    }

    @Test func brazesSpellingEnableSDKAuthenticationIsReadFromAPropertyList() throws {
        let plist = """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict>
            <key>projectToken</key><string>project-1</string>
            <key>baseURL</key><string>https://api.example.com</string>
            <key>advancedAuthEnabled</key><true/>
            <key>providerName</key><string>SDKAuthorization.Signature</string>
            <key>EnableSDKAuthentication</key><false/>
            </dict></plist>
            """
        let configuration = try AuthorizationConfiguration(data: Data(plist.utf8), format: .propertyList, registry: registry)
        #expect(configuration.modeSettings.bool("signatureAuthenticationEnabled") == false)
        #expect(configuration.providerLookup == .implicitName(BuiltInProviderName.signature))
    }

    @Test(arguments: ["signatureAuthenticationEnabled", "EnableSDKAuthentication"])
    func aSignatureFlagThatIsNotABooleanIsRefusedUnderTheKeyWritten(key: String) {
        #expect(throws: ConfigurationError.wrongType(key: key, expected: "a boolean")) {
            try file(#""providerName": "SDKAuthorization.Signature", "\#(key)": "yes""#)
        }
    }

    @Test func aFileNamingBothSpellingsOfTheSignatureFlagIsRefused() {
        #expect(throws: ConfigurationError.invalidValue(key: "EnableSDKAuthentication", reason: "the file also names signatureAuthenticationEnabled; EnableSDKAuthentication is Braze's spelling of the same key, keep one")) {
            try file(#""providerName": "SDKAuthorization.Signature", "signatureAuthenticationEnabled": true, "EnableSDKAuthentication": true"#)
        }
    }

    @Test(arguments: ["signatureAuthenticationEnabled", "EnableSDKAuthentication"])
    func aSignatureFlagForAnotherModeIsRefusedNotIgnored(key: String) {
        #expect(throws: ConfigurationError.invalidValue(key: key, reason: "it applies only to the mode SDKAuthorization.Signature; set providerName to SDKAuthorization.Signature or remove it")) {
            try file(#""advancedAuthEnabled": true, "providerName": "SDKAuthorization.IDTokenRefresh", "\#(key)": true"#)
        }
        #expect(throws: ConfigurationError.invalidValue(key: key, reason: "it applies only to the mode SDKAuthorization.Signature; set providerName to SDKAuthorization.Signature or remove it")) {
            try file(#""\#(key)": true"#)
        }
    }

    // MARK: Token-exchange mode

    /// A platform that answers exchanges at `/ccai/exchange` with an auth token, and 200 elsewhere.
    func platform() -> RecordingTransport {
        RecordingTransport { request in
            guard request.url.path == "/ccai/exchange" else { return ServerResponse(statusCode: 200, body: Data("{}".utf8)) }
            return ServerResponse(statusCode: 200, body: Data(#"{"auth_token":"auth-token-1","expires_in":600}"#.utf8))
        }
    }

    @Test func theTokenExchangeModeIsChosenByNameFromAFileAndExchangesThroughTheClientsTransport() async throws {
        let configuration = try file(#""advancedAuthEnabled": true, "providerName": "SDKAuthorization.TokenExchange", "tokenExchangeURL": "https://platform.example.com/ccai/exchange""#)
        #expect(configuration.modeSettings.url("tokenExchangeURL") == URL(string: "https://platform.example.com/ccai/exchange"))
        let transport = platform()
        let client = try client(configuration, transport: transport)
        let exchange = try #require(client.provider as? TokenExchangeProvider)
        #expect(exchange.exchangeURL == URL(string: "https://platform.example.com/ccai/exchange"))
        // No downcast to finish it: the signer came with the registration.
        _ = try await client.send(.appInboxFetch)
        #expect(transport.requests.map(\.url.path) == ["/ccai/exchange", "/webxp/projects/project-1/appinbox/fetch"])
        #expect(transport.requests.last?.value(forHeader: "Authorization") == "Bearer auth-token-1")
    }

    /// The store and the user are collaborators the app supplies when it registers the mode, as the
    /// signer is: the provider a file chooses keeps its token there, with no downcast.
    @Test func theTokenExchangeModeChosenByNameKeepsItsTokenInTheStoreItWasRegisteredWith() async throws {
        let store = MemoryCredentialStore()
        let registry = ProviderRegistry()
        let clock = self.clock
        registry.register(TokenExchangeMode(signer: .async { _ in
            let now = clock.now().timeIntervalSince1970
            return makeJWT(["iat": now, "exp": now + 300], header: ["alg": "HS256", "typ": "JWT"])
        }, store: store, identity: "user-7"))
        let configuration = try file(#""advancedAuthEnabled": true, "providerName": "SDKAuthorization.TokenExchange", "tokenExchangeURL": "https://platform.example.com/ccai/exchange""#,
                                     registry: registry)
        let client = try AuthorizedHTTPClient(configuration: configuration, registry: registry, transport: platform(), diagnostics: sink, clock: clock)
        _ = try await client.send(.appInboxFetch)
        // The save lands just after the token is delivered.
        for _ in 0..<1_000 where store.stored.withLock({ $0.isEmpty }) { await Task.yield() }
        let kept = try #require(try store.load(identity: "user-7", kind: .exchangeAtPlatform))
        #expect(kept.token == "auth-token-1")
    }

    @Test func theRefreshModeChosenByNameKeepsItsTokenInTheStoreItWasRegisteredWith() async throws {
        let store = MemoryCredentialStore()
        let registry = ProviderRegistry()
        registry.register(IDTokenRefreshMode(tokenRefresh: { "id-token-1" }, credentialStore: store, credentialIdentity: "user-7"))
        var policy = AuthorizationPolicy()
        try policy.add(Endpoint("ticketing", method: "GET", path: "/rover/ticketing"), scheme: .bearer)
        let configuration = try file(#""advancedAuthEnabled": true, "providerName": "SDKAuthorization.IDTokenRefresh""#, registry: registry)
        let transport = RecordingTransport()
        let client = try AuthorizedHTTPClient(configuration: configuration, policy: policy, registry: registry, transport: transport, diagnostics: sink, clock: clock)
        _ = try await client.send("ticketing")
        #expect(transport.requests.first?.value(forHeader: "Authorization") == "Bearer id-token-1")
        for _ in 0..<1_000 where store.stored.withLock({ $0.isEmpty }) { await Task.yield() }
        let kept = try #require(try store.load(identity: "user-7", kind: .idTokenOfAPI))
        #expect(kept.token == "id-token-1")
    }

    @Test func aModeNamedInAFileButNotRegisteredIsNotFoundAndSaysWhatToRegister() throws {
        let configuration = try file(#""advancedAuthEnabled": true, "providerName": "SDKAuthorization.Signature""#)
        #expect(throws: ConfigurationError.advancedAuthEnabledWithoutProvider.appendingHint(
            #""SDKAuthorization.Signature" is a mode in the product SDKAuthorizationSignature: link SDKAuthorizationSignature to the app's target and register SignatureMode() with the registry"#)) {
            try AuthorizedHTTPClient(configuration: configuration, registry: ProviderRegistry(), transport: RecordingTransport(), diagnostics: sink, clock: clock)
        }
    }

    @Test func theTokenExchangeModeNamedInCodeWithoutAnExchangeURLFailsWithTheKeyItNeeds() throws {
        let configuration = try engagementConfiguration(advancedAuthEnabled: true, providerLookup: .implicitName(BuiltInProviderName.tokenExchange))
        #expect(throws: ConfigurationError.missingKey("tokenExchangeURL")) {
            try client(configuration, transport: RecordingTransport())
        }
        #expect(sink.diagnostics.isEmpty, "a start-up error is thrown, not also logged")
    }

    @Test func aFileChoosingTheTokenExchangeModeWithoutItsURLIsRefused() {
        #expect(throws: ConfigurationError.missingKey("tokenExchangeURL")) {
            try file(#""advancedAuthEnabled": true, "providerName": "SDKAuthorization.TokenExchange""#)
        }
    }

    @Test func aTokenExchangeURLForAnotherModeIsRefusedNotIgnored() {
        #expect(throws: ConfigurationError.invalidValue(key: "tokenExchangeURL", reason: "it applies only to the mode SDKAuthorization.TokenExchange; set providerName to SDKAuthorization.TokenExchange or remove it")) {
            try file(#""advancedAuthEnabled": true, "providerName": "SDKAuthorization.Signature", "tokenExchangeURL": "https://platform.example.com/x""#)
        }
    }

    @Test func aTokenExchangeURLThatIsNotAStringIsRefused() {
        #expect(throws: ConfigurationError.wrongType(key: "tokenExchangeURL", expected: "a URL string")) {
            try file(#""providerName": "SDKAuthorization.TokenExchange", "tokenExchangeURL": 443"#)
        }
    }

    @Test(arguments: [
        ("http://platform.example.com/x", "'http://platform.example.com/x' uses http, which is allowed only on a loopback host (localhost, 127.0.0.0/8, [::1]); use https"),
        ("exchange", "'exchange' is not an absolute https URL with a host (and no query or fragment)"),
        ("ftp://platform.example.com/x", "'ftp://platform.example.com/x' is not an absolute https URL with a host (and no query or fragment)"),
        ("https://platform.example.com/x?key=secret-1", "'https://platform.example.com/x?...' is not an absolute https URL with a host (and no query or fragment)"),
        ("https://platform.example.com/x#top", "'https://platform.example.com/x?...' is not an absolute https URL with a host (and no query or fragment)"),
        ("https://platform%2Eexample.com/x", "'https://platform%2Eexample.com/x' is not an absolute https URL with a host (and no query or fragment)"),
        ("https://user:secret-2@platform.example.com/x", "user info ('user:password@') is not allowed in 'https://...@platform.example.com/x'"),
        ("https://platform.example.com/a\r\nX: y", "'https://platform.example.com/a\\u{d}\\u{a}X: y' is not an absolute https URL with a host (and no query or fragment)"),
    ])
    func aBadTokenExchangeURLIsRefusedNamingTheKeyAndNoSecret(url: String, reason: String) throws {
        let json = String(decoding: try JSONSerialization.data(withJSONObject: url, options: .fragmentsAllowed), as: UTF8.self)
        #expect(throws: ConfigurationError.invalidValue(key: "tokenExchangeURL", reason: reason)) {
            try file(#""providerName": "SDKAuthorization.TokenExchange", "tokenExchangeURL": \#(json)"#)
        }
        #expect(!reason.contains("secret"))
    }

    @Test func aTokenExchangeURLWithSurroundingWhiteSpaceIsRefused() {
        #expect(throws: ConfigurationError.surroundingWhitespace(key: "tokenExchangeURL")) {
            try file(#""providerName": "SDKAuthorization.TokenExchange", "tokenExchangeURL": " https://platform.example.com/x""#)
        }
    }

    @Test(arguments: ["http://127.0.0.1:8080/ccai/exchange", "http://localhost:9000/x", "http://[::1]:8080/x", "https://platform.example.com:8443/x"])
    func anHTTPSOrLoopbackTokenExchangeURLIsAccepted(url: String) throws {
        let configuration = try file(#""advancedAuthEnabled": true, "providerName": "SDKAuthorization.TokenExchange", "tokenExchangeURL": "\#(url)""#)
        #expect(configuration.modeSettings.url("tokenExchangeURL")?.absoluteString == url)
    }

    @Test func aBadTokenExchangeURLInCodeIsRefusedWhenTheClientStartsAsInAFile() throws {
        let url = try #require(URL(string: "http://platform.example.com/x"))
        let configuration = try AuthorizationConfiguration(projectToken: "p", baseURL: "https://api.example.com", authorization: "Token k", advancedAuthEnabled: true,
                                                           providerLookup: .implicitName(BuiltInProviderName.tokenExchange),
                                                           modeSettings: ModeSettings(["tokenExchangeURL": .url(url)]))
        #expect(throws: ConfigurationError.invalidValue(key: "tokenExchangeURL", reason: "'http://platform.example.com/x' uses http, which is allowed only on a loopback host (localhost, 127.0.0.0/8, [::1]); use https")) {
            try client(configuration, transport: RecordingTransport())
        }
    }

    @Test func modeSettingsInCodeForAProviderThatIsNoModeAreRefused() throws {
        registry.register(name: "Plain") { _ in try SignatureAuthentication() }
        let configuration = try AuthorizationConfiguration(projectToken: "p", baseURL: "https://api.example.com", authorization: "Token k", advancedAuthEnabled: true,
                                                           providerLookup: .implicitName("Plain"), modeSettings: ModeSettings(["colour": .string("red")]))
        #expect(throws: ConfigurationError.unknownKeys(["colour"]).appendingHint("'colour' is not a setting of Plain, which is not a registered mode")) {
            try client(configuration, transport: RecordingTransport())
        }
    }

    @Test func theDescriptionNamesTheModeSettingsOnlyWhenSet() throws {
        let exchange = try file(#""advancedAuthEnabled": true, "providerName": "SDKAuthorization.TokenExchange", "tokenExchangeURL": "https://platform.example.com/ccai/exchange""#)
        #expect(exchange.description.hasSuffix("customerTokenCaching: disabled, tokenExchangeURL: https://platform.example.com/ccai/exchange)"))
        let signature = try file(#""advancedAuthEnabled": true, "providerName": "SDKAuthorization.Signature", "signatureAuthenticationEnabled": false"#)
        #expect(signature.description.hasSuffix("customerTokenCaching: disabled, signatureAuthenticationEnabled: false)"))
        #expect(try file("").description.hasSuffix("customerTokenCaching: disabled)"))
    }

    // MARK: Keys

    @Test(arguments: [
        ("tokenExchangeUrl", "'tokenExchangeUrl': did you mean 'tokenExchangeURL'?"),
        ("enableSDKAuthentication", "'enableSDKAuthentication': did you mean 'EnableSDKAuthentication'?"),
        ("baseUrl", "'baseUrl': did you mean 'baseURL'?"),
    ])
    func aMisspelledKeyIsAnUnknownKeyWithDidYouMean(key: String, hint: String) {
        #expect(throws: ConfigurationError.unknownKeys([key]).appendingHint(hint)) {
            try file(#""providerName": "SDKAuthorization.Signature", "\#(key)": true"#)
        }
    }

    @Test func anUnknownKeyReadFromAFileNamesTheFile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("modes-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("authorization.json")
        try Data(#"{"projectToken": "p", "baseURL": "https://api.example.com", "advancedAuthEnabeld": true}"#.utf8).write(to: url)
        #expect(throws: ConfigurationError.unknownKeys(["advancedAuthEnabeld"]).appendingHint("in 'authorization.json'; 'advancedAuthEnabeld': did you mean 'advancedAuthEnabled'?")) {
            try AuthorizationConfiguration(contentsOf: url, registry: registry)
        }
    }

    @Test(arguments: [
        ("tokenExchangeURL", #""tokenExchangeURL": "https://platform.example.com/x""#, "SDKAuthorization.TokenExchange", "TokenExchangeMode(signer:)", "SDKAuthorizationTokenExchange"),
        ("signatureAuthenticationEnabled", #""signatureAuthenticationEnabled": true"#, "SDKAuthorization.Signature", "SignatureMode()", "SDKAuthorizationSignature"),
        ("Braze", #""Braze": {"EnableSDKAuthentication": true}"#, "SDKAuthorization.Signature", "SignatureMode()", "SDKAuthorizationSignature"),
    ])
    func aKeyOfAModeTheRegistryDoesNotHoldSaysWhichModeToRegister(key: String, member: String, mode: String, registration: String, product: String) {
        #expect(throws: ConfigurationError.unknownKeys([key]).appendingHint(
            "'\(key)' is a key of the mode \(mode), which is not registered: register \(registration) (product \(product)) with the registry that reads the file")) {
            try file(member, registry: ProviderRegistry())
        }
    }

    @Test func aCustomModeOwnsItsKeysInAFileAndGetsThemChecked() async throws {
        struct PartnerMode: NamedProviderFactory {
            static let providerName = "Partner.Token"
            static let settingKeys = [ModeSettingKey("partnerRegion", type: .string, required: true, meaning: "The region.", validate: { value in
                value == .string("eu") || value == .string("us") ? nil : "expected 'eu' or 'us'"
            })]
            let seen: Locked<ModeSettings?>
            func makeProvider(for context: ProviderFactoryContext) throws -> any AuthorizationProvider {
                seen.withLock { $0 = context.modeSettings }
                return try SignatureAuthentication()
            }
        }
        let seen = Locked<ModeSettings?>(nil)
        registry.register(PartnerMode(seen: seen))
        let configuration = try file(#""advancedAuthEnabled": true, "providerName": "Partner.Token", "partnerRegion": "eu""#)
        _ = try client(configuration, transport: RecordingTransport())
        #expect(seen.withLock { $0 } == ModeSettings(["partnerRegion": .string("eu")]))
        #expect(throws: ConfigurationError.invalidValue(key: "partnerRegion", reason: "expected 'eu' or 'us'")) {
            try file(#""advancedAuthEnabled": true, "providerName": "Partner.Token", "partnerRegion": "mars""#)
        }
        #expect(throws: ConfigurationError.wrongType(key: "partnerRegion", expected: "a string")) {
            try file(#""advancedAuthEnabled": true, "providerName": "Partner.Token", "partnerRegion": 1"#)
        }
        #expect(throws: ConfigurationError.missingKey("partnerRegion")) {
            try file(#""advancedAuthEnabled": true, "providerName": "Partner.Token""#)
        }
    }

    @Test func aMisspeltNameOfARegisteredModeSaysDidYouMean() throws {
        struct PartnerMode: StandaloneProviderFactory {
            static let providerName = "Partner.Token"
            func makeProvider(for context: ProviderFactoryContext) throws -> any AuthorizationProvider { try SignatureAuthentication() }
        }
        registry.register(PartnerMode())
        let configuration = try file(#""advancedAuthEnabled": true, "providerName": "Partner.Tokn""#)
        #expect(throws: ConfigurationError.advancedAuthEnabledWithoutProvider.appendingHint(#""Partner.Tokn" is not registered; did you mean "Partner.Token"?"#)) {
            try client(configuration, transport: RecordingTransport())
        }
    }

    // MARK: Braze dictionary

    @Test func enableSDKAuthenticationInABrazeDictionaryTurnsTheSignatureModeOn() async throws {
        let configuration = try file(#""Braze": {"EnableSDKAuthentication": true}"#)
        #expect(configuration.advancedAuthEnabled)
        #expect(configuration.providerLookup == .implicitName(BuiltInProviderName.signature))
        #expect(configuration.notes.isEmpty)
        let transport = RecordingTransport()
        let client = try client(configuration, transport: transport)
        let authentication = try #require(client.provider as? SignatureAuthentication)
        try authentication.changeUser("user-42", signature: signature)
        _ = try await client.send(.appInboxFetch)
        #expect(transport.requests.first?.value(forHeader: "X-Braze-Auth-Signature") == signature)
    }

    @Test func aBrazeDictionaryInAPropertyListTurnsTheSignatureModeOn() throws {
        let plist = """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict>
            <key>projectToken</key><string>project-1</string>
            <key>baseURL</key><string>https://api.example.com</string>
            <key>Braze</key><dict><key>EnableSDKAuthentication</key><true/></dict>
            </dict></plist>
            """
        let configuration = try AuthorizationConfiguration(data: Data(plist.utf8), format: .propertyList, registry: registry)
        #expect(configuration.advancedAuthEnabled)
        #expect(configuration.providerLookup == .implicitName(BuiltInProviderName.signature))
    }

    @Test(arguments: [
        (#""Braze": {}"#, "the mode SDKAuthorization.Signature is off: the Braze dictionary has no EnableSDKAuthentication set to true, which turns it on"),
        (#""Braze": {"EnableSDKAuthentication": false}"#, "the mode SDKAuthorization.Signature is off: Braze.EnableSDKAuthentication is false"),
    ])
    func aBrazeDictionaryWithoutTheSwitchLeavesTheSignatureModeOffAndSaysSo(member: String, note: String) throws {
        let configuration = try file(member)
        #expect(configuration.advancedAuthEnabled == false)
        #expect(configuration.notes == [note])
    }

    @Test func aBrazeSwitchThatIsNotABooleanIsRefused() {
        #expect(throws: ConfigurationError.wrongType(key: "Braze.EnableSDKAuthentication", expected: "a boolean")) {
            try file(#""Braze": {"EnableSDKAuthentication": "YES"}"#)
        }
        #expect(throws: ConfigurationError.wrongType(key: "Braze", expected: "a dictionary")) {
            try file(#""Braze": true"#)
        }
    }

    @Test func anUnknownKeyInTheBrazeDictionaryIsRefusedWithDidYouMean() {
        #expect(throws: ConfigurationError.unknownKeys(["Braze.EnableSdkAuthentication"]).appendingHint(
            "'Braze.EnableSdkAuthentication': did you mean 'Braze.EnableSDKAuthentication'?")) {
            try file(#""Braze": {"EnableSdkAuthentication": true}"#)
        }
    }

    @Test func theBrazeSwitchAndAnotherProviderNameOrAdvancedAuthOffAreRefused() {
        #expect(throws: ConfigurationError.invalidValue(key: "Braze.EnableSDKAuthentication", reason: "it turns on the mode SDKAuthorization.Signature, but providerName names SDKAuthorization.IDTokenRefresh; keep one")) {
            try file(#""Braze": {"EnableSDKAuthentication": true}, "providerName": "SDKAuthorization.IDTokenRefresh""#)
        }
        #expect(throws: ConfigurationError.invalidValue(key: "Braze.EnableSDKAuthentication", reason: "it turns on the mode SDKAuthorization.Signature, which sends customer tokens, but advancedAuthEnabled is false; keep one")) {
            try file(#""Braze": {"EnableSDKAuthentication": true}, "advancedAuthEnabled": false"#)
        }
    }

    @Test func theBrazeSwitchAndTheTopLevelSpellingTogetherAreRefused() {
        #expect(throws: ConfigurationError.invalidValue(key: "EnableSDKAuthentication", reason: "the file also names Braze.EnableSDKAuthentication; EnableSDKAuthentication is Braze's spelling of the same key, keep one")) {
            try file(#""Braze": {"EnableSDKAuthentication": true}, "EnableSDKAuthentication": true"#)
        }
    }

    @Test func aPropertyListNestedDeeperThanTheBrazeDictionaryIsRefused() {
        let plist = """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict>
            <key>Braze</key><dict><key>Deeper</key><dict><key>x</key><true/></dict></dict>
            </dict></plist>
            """
        #expect(throws: ConfigurationError.malformedFile(reason: "expected a property list whose root is a dictionary of configuration keys with plain values")) {
            try AuthorizationConfiguration(data: Data(plist.utf8), format: .propertyList, registry: registry)
        }
    }

    @Test func theBuiltInModesDeclareTheirNamesAndKeys() {
        #expect(SignatureMode.providerName == BuiltInProviderName.signature)
        #expect(TokenExchangeMode.providerName == BuiltInProviderName.tokenExchange)
        #expect(IDTokenRefreshMode.providerName == BuiltInProviderName.idTokenRefresh)
        #expect(SignatureMode.settingKeys.map(\.name) == ["signatureAuthenticationEnabled"])
        #expect(TokenExchangeMode.settingKeys.map(\.name) == ["tokenExchangeURL"])
        #expect(IDTokenRefreshMode.settingKeys.isEmpty)
        #expect(BuiltInProviderName.modes.map(\.providerName) == [BuiltInProviderName.idTokenRefresh, BuiltInProviderName.signature, BuiltInProviderName.tokenExchange])
    }

    /// Engagement describes the built-in modes for an app that does not link them: each
    /// description is the mode's own (name, product, every key's declaration), so a key added,
    /// renamed or respelt in a mode shows here.
    @Test(arguments: [
        (IDTokenRefreshMode.modeDescription, "IDTokenRefreshMode(refresh:)"),
        (SignatureMode.modeDescription, "SignatureMode()"),
        (TokenExchangeMode.modeDescription, "TokenExchangeMode(signer:)"),
    ])
    func engagementDescribesEachBuiltInModeAsTheModeDoes(own: ModeDescription, registration: String) throws {
        let described = try #require(BuiltInProviderName.modes.first { $0.providerName == own.providerName })
        #expect(described.product == own.product)
        #expect(described.registration == registration)
        #expect(described.settingKeys.map(ModeDescriptionText.object(for:)) == own.settingKeys.map(ModeDescriptionText.object(for:)))
    }
}
