import Foundation
import SDKAuthorizationTesting
import EngagementTestSupport
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationEngagement
@testable import SDKAuthorizationSignature
@testable import SDKAuthorizationTokenExchange

@Suite("The signature and token-exchange modes chosen by name, in code and from a file", .hangLimit)
struct BuiltInModesByNameTests {
    let clock = ManualClock()
    let sink = RecordingDiagnosticsSink()
    let signature = makeJWT(["sub": "user-42", "exp": 1_900_000_000])

    /// A configuration read from a JSON file of the project keys plus `keys` (raw JSON members).
    func file(_ keys: String) throws -> AuthorizationConfiguration {
        try AuthorizationConfiguration(
            data: Data(#"{"projectToken": "project-1", "baseURL": "https://api.example.com", "authorization": "Token api-key-1", \#(keys)}"#.utf8),
            format: .json
        )
    }

    func client(_ configuration: AuthorizationConfiguration, transport: RecordingTransport) throws -> AuthorizedHTTPClient {
        try AuthorizedHTTPClient(configuration: configuration, transport: transport, diagnostics: sink, clock: clock)
    }

    // MARK: Signature mode

    @Test func theSignatureModeIsChosenByNameFromAFileAndSendsTheUsersSignature() async throws {
        let configuration = try file(#""advancedAuthEnabled": true, "providerName": "SDKAuthorization.Signature""#)
        #expect(configuration.signatureAuthenticationEnabled)
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
        #expect(configuration.signatureAuthenticationEnabled == false)
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
        let configuration = try AuthorizationConfiguration(data: Data(plist.utf8), format: .propertyList)
        #expect(configuration.signatureAuthenticationEnabled == false)
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
        #expect(throws: ConfigurationError.invalidValue(key: key, reason: "it applies only to the signature mode; set providerName to SDKAuthorization.Signature or remove it")) {
            try file(#""advancedAuthEnabled": true, "providerName": "SDKAuthorization.IDTokenRefresh", "\#(key)": true"#)
        }
        #expect(throws: ConfigurationError.invalidValue(key: key, reason: "it applies only to the signature mode; set providerName to SDKAuthorization.Signature or remove it")) {
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
        #expect(configuration.tokenExchangeURL == URL(string: "https://platform.example.com/ccai/exchange"))
        let transport = platform()
        let client = try client(configuration, transport: transport)
        let exchange = try #require(client.provider as? TokenExchangeProvider)
        #expect(exchange.exchangeURL == URL(string: "https://platform.example.com/ccai/exchange"))
        let now = clock.now().timeIntervalSince1970
        exchange.setSigner(.async { _ in makeJWT(["iat": now, "exp": now + 300], header: ["alg": "HS256", "typ": "JWT"]) })
        _ = try await client.send(.appInboxFetch)
        #expect(transport.requests.map(\.url.path) == ["/ccai/exchange", "/webxp/projects/project-1/appinbox/fetch"])
        #expect(transport.requests.last?.value(forHeader: "Authorization") == "Bearer auth-token-1")
    }

    @Test func theTokenExchangeModeLoadedByNameFailsARequestUntilTheAppSetsASigner() async throws {
        let configuration = try file(#""advancedAuthEnabled": true, "providerName": "SDKAuthorization.TokenExchange", "tokenExchangeURL": "https://platform.example.com/ccai/exchange""#)
        let transport = platform()
        let client = try client(configuration, transport: transport)
        let error = await #expect(throws: RequestError.self) { try await client.send(.appInboxFetch) }
        #expect(error?.code == .signingFailed)
        #expect(error?.description.contains("no payload signer is set; give the provider one with setSigner(_:)") == true)
        #expect(transport.requests.isEmpty)
    }

    @Test func theTokenExchangeModeNamedInCodeWithoutAnExchangeURLFailsWithTheKeyItNeeds() throws {
        let configuration = try engagementConfiguration(advancedAuthEnabled: true, providerLookup: .implicitName(BuiltInProviderName.tokenExchange))
        #expect(throws: ConfigurationError.missingKey("tokenExchangeURL")) {
            try client(configuration, transport: RecordingTransport())
        }
        #expect(sink.messages(at: .error) == ["The configuration key 'tokenExchangeURL' is required."])
    }

    @Test func aFileChoosingTheTokenExchangeModeWithoutItsURLIsRefused() {
        #expect(throws: ConfigurationError.missingKey("tokenExchangeURL")) {
            try file(#""advancedAuthEnabled": true, "providerName": "SDKAuthorization.TokenExchange""#)
        }
    }

    @Test func aTokenExchangeURLForAnotherModeIsRefusedNotIgnored() {
        #expect(throws: ConfigurationError.invalidValue(key: "tokenExchangeURL", reason: "it applies only to the token-exchange mode; set providerName to SDKAuthorization.TokenExchange or remove it")) {
            try file(#""advancedAuthEnabled": true, "providerName": "SDKAuthorization.Signature", "tokenExchangeURL": "https://platform.example.com/x""#)
        }
    }

    @Test func aTokenExchangeURLThatIsNotAStringIsRefused() {
        #expect(throws: ConfigurationError.wrongType(key: "tokenExchangeURL", expected: "a string")) {
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
        let configuration = try file(#""providerName": "SDKAuthorization.TokenExchange", "tokenExchangeURL": "\#(url)""#)
        #expect(configuration.tokenExchangeURL?.absoluteString == url)
    }

    @Test func aBadTokenExchangeURLInCodeIsRefusedAsInAFile() {
        #expect(throws: ConfigurationError.invalidValue(key: "tokenExchangeURL", reason: "'http://platform.example.com/x' uses http, which is allowed only on a loopback host (localhost, 127.0.0.0/8, [::1]); use https")) {
            try AuthorizationConfiguration(projectToken: "p", baseURL: "https://api.example.com", authorization: nil,
                                           providerLookup: .implicitName(BuiltInProviderName.tokenExchange), tokenExchangeURL: "http://platform.example.com/x")
        }
    }

    @Test func theDescriptionNamesTheModeSettingsOnlyWhenSet() throws {
        let exchange = try file(#""providerName": "SDKAuthorization.TokenExchange", "tokenExchangeURL": "https://platform.example.com/ccai/exchange""#)
        #expect(exchange.description.hasSuffix("customerTokenCaching: disabled, tokenExchangeURL: https://platform.example.com/ccai/exchange)"))
        let signature = try file(#""providerName": "SDKAuthorization.Signature", "signatureAuthenticationEnabled": false"#)
        #expect(signature.description.hasSuffix("customerTokenCaching: disabled, signatureAuthenticationEnabled: false)"))
        #expect(try file(#""providerName": "SDKAuthorization.Signature""#).description.hasSuffix("customerTokenCaching: disabled)"))
    }

    // MARK: Keys

    @Test(arguments: ["tokenExchangeUrl", "enableSDKAuthentication", "signatureEnabled"])
    func aMisspelledModeKeyIsAnUnknownKey(key: String) {
        #expect(throws: ConfigurationError.unknownKeys([key])) {
            try file(#""providerName": "SDKAuthorization.Signature", "\#(key)": true"#)
        }
    }

    @Test func everyBuiltInNameStandsForANamedProviderFactoryInItsProduct() {
        let lookup: (String) -> Any.Type? = { NSClassFromString($0) ?? SwiftTypeLookup.type(named: $0) }
        #expect(BuiltInProviderName.typeNames.keys.sorted() == [BuiltInProviderName.idTokenRefresh, BuiltInProviderName.signature, BuiltInProviderName.tokenExchange])
        for (name, typeName) in BuiltInProviderName.typeNames {
            #expect((lookup(typeName) as? any NamedProviderFactory.Type) != nil, "\(name) -> \(typeName)")
        }
    }
}
