import Foundation
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationEngagement

@Suite("Configuration in code", .hangLimit)
struct AuthorizationConfigurationTests {
    private func configure(authorization: String? = "Token key", projectToken: String = "p1", baseURL: String = "https://api.example.com") throws(ConfigurationError) -> AuthorizationConfiguration {
        try AuthorizationConfiguration(projectToken: projectToken, baseURL: baseURL, authorization: authorization)
    }

    @Test func tokenPrefixBearerPrefixAndBareValueAreAccepted() throws {
        #expect(try configure(authorization: "Token abc").authorization?.headerValue == "Token abc")
        #expect(try configure(authorization: "Bearer x.y.z").authorization?.headerValue == "Bearer x.y.z")
        #expect(try configure(authorization: "abc").authorization?.headerValue == "Token abc")
        #expect(try configure(authorization: "token abc").authorization?.headerValue == "Token abc")
        #expect(try configure(authorization: nil).authorization == nil)
    }

    @Test func authorizationWrittenAsExponeaIOSWritesItIsTheSameAsTheString() throws {
        // Exponea iOS: Configuration(projectToken:authorization: .token("KEY"), baseUrl:), one `try` for all.
        let token = try AuthorizationConfiguration(projectToken: "p1", baseURL: "https://api.example.com", authorization: .token("KEY"))
        #expect(token.authorization == (try configure(authorization: "Token KEY")).authorization)
        #expect(token.authorization?.headerValue == "Token KEY")
        let bearer = try AuthorizationConfiguration(projectToken: "p1", baseURL: "https://api.example.com", authorization: .bearer("x.y.z"), advancedAuthEnabled: true)
        #expect(bearer.authorization?.headerValue == "Bearer x.y.z")
        #expect(bearer.advancedAuthEnabled)
        // Exponea's `.none` is Optional's: no project credential.
        #expect(try AuthorizationConfiguration(projectToken: "p1", baseURL: "https://api.example.com", authorization: .none).authorization == nil)
    }

    @Test func aBadKeyWrittenAsExponeaWritesItFailsAsTheStringDoes() {
        #expect(throws: ConfigurationError.self) {
            try AuthorizationConfiguration(projectToken: "p1", baseURL: "https://api.example.com", authorization: .token(""))
        }
        #expect(throws: ConfigurationError.self) {
            try AuthorizationConfiguration(projectToken: "p1", baseURL: "ftp://api.example.com", authorization: .token("KEY"))
        }
    }

    @Test(arguments: ["Basic Zm9vOmJhcg==", "basic Zm9v", "Basic", "  Basic abc"])
    func basicIsRefusedWithTheDocumentedMessage(value: String) {
        #expect(throws: ConfigurationError.basicAuthenticationNotSupported) { try configure(authorization: value) }
        #expect(ConfigurationError.basicAuthenticationNotSupported.message == "Basic authentication is not supported by mobile SDK for security reasons.")
    }

    @Test(arguments: ["", "   ", "Token ", "Bearer    "])
    func emptyCredentialIsRefused(value: String) {
        #expect(throws: ConfigurationError.self) { try configure(authorization: value) }
        do {
            _ = try configure(authorization: value)
        } catch {
            #expect(error.code == .emptyCredential, "expected emptyCredential, got \(error)")
        }
    }

    @Test(arguments: ["Token abc\r\nX-Evil: 1", "abc\n", "Bearer a\u{0}b", "Token a\tb", "key\u{7F}", "Token a\u{85}b"])
    func controlCharactersInTheCredentialAreRefused(value: String) {
        do {
            _ = try configure(authorization: value)
            Issue.record("accepted \(value.debugDescription)")
        } catch {
            #expect(error.code == .credentialContainsControlCharacters, "expected credentialContainsControlCharacters, got \(error)")
        }
    }

    @Test func emptyProjectTokenIsRefused() {
        #expect(throws: ConfigurationError.emptyProjectToken) { try configure(projectToken: "") }
        #expect(throws: ConfigurationError.emptyProjectToken) { try configure(projectToken: "  ") }
        #expect(throws: ConfigurationError.credentialContainsControlCharacters(field: "projectToken")) { try configure(projectToken: "p\n1") }
    }

    @Test(arguments: ["ftp://api.example.com", "api.example.com", "https://", "file:///etc/passwd", "https://api.example.com?x=1", "", "https://api.example.com/\n"])
    func baseURLThatIsNotHTTPIsRefused(value: String) {
        #expect(throws: ConfigurationError.invalidBaseURL(ConfigurationError.sanitizedURLText(value))) { try configure(baseURL: value) }
    }

    @Test func baseURLWithAPathIsKept() throws {
        #expect(try configure(baseURL: "http://127.0.0.1:8080/api").baseURL.absoluteString == "http://127.0.0.1:8080/api")
    }

    @Test func emptyProviderNameIsRefusedInEitherConvention() {
        for lookup in [ProviderLookup.implicitName(""), .implicitName(" "), .registeredClassName("")] {
            #expect(throws: ConfigurationError.invalidValue(key: "providerName", reason: "the provider name must not be empty")) {
                try AuthorizationConfiguration(projectToken: "p", baseURL: "https://a.example", authorization: "k", providerLookup: lookup)
            }
        }
    }

    @Test func emptyImplicitProviderNameAndBadLeewayAreRefused() {
        #expect(throws: ConfigurationError.self) {
            try AuthorizationConfiguration(projectToken: "p", baseURL: "https://a.example", authorization: "k", providerLookup: .implicitName(""))
        }
        #expect(throws: ConfigurationError.self) {
            try AuthorizationConfiguration(projectToken: "p", baseURL: "https://a.example", authorization: "k", customerTokenCaching: .honoringExpiry(leeway: -1))
        }
        #expect(throws: ConfigurationError.self) {
            try AuthorizationConfiguration(projectToken: "p", baseURL: "https://a.example", authorization: "k", customerTokenCaching: .honoringExpiry(leeway: .infinity))
        }
    }

    @Test func descriptionsRedactTheCredential() throws {
        let authorization = try ProjectAuthorization(parsing: "Token super-secret-api-key-123")
        #expect(authorization.description == "Token Authorization (token redacted)")
        #expect(!authorization.debugDescription.contains("super-secret-api-key-123"))
        let configuration = try configure(authorization: "Token super-secret-api-key-123")
        #expect(!String(describing: configuration).contains("super-secret-api-key-123"))
        #expect(!String(reflecting: configuration).contains("super-secret-api-key-123"))
    }
}
