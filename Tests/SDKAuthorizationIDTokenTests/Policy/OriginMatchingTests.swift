import Foundation
import SDKAuthorizationModeKit
import SDKAuthorizationTesting
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationIDToken

/// Issue 18: rules and authorized domains match the scheme (https unless a pattern names http on
/// a loopback host) and the port (the scheme's default unless a pattern names another).
@Suite("Policy: scheme and port", .hangLimit)
struct OriginMatchingTests {
    private func request(_ url: String, method: String = "GET") throws -> OutgoingRequest {
        OutgoingRequest(method: method, url: try #require(URL(string: url)))
    }

    /// The scheme the authorizer gives `url` under a policy of one bearer rule for `pattern`.
    private func scheme(for url: String, rule pattern: String) throws -> AuthorizationScheme {
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(host: pattern, scheme: .bearer))
        let authorizer = try RequestAuthorizer(policy: policy, providers: [.bearer: ScriptedProvider(.token("tok"))], diagnostics: RecordingDiagnosticsSink())
        return authorizer.scheme(for: try request(url)).scheme
    }

    /// The message a pattern is refused with, for an authorized domain.
    private func refusal(_ pattern: String) -> String? {
        do {
            _ = try AuthorizedDomain(pattern)
            return nil
        } catch {
            #expect(error.code == .invalidValue)
            #expect(error.key == "authorizedDomains")
            return error.reason
        }
    }

    // MARK: Matching

    @Test(arguments: ["http://api.example.com/v1/users", "https://api.example.com:8443/v1/users", "ftp://api.example.com/v1/users",
                      "HTTP://api.example.com/v1/users", "wss://api.example.com/v1/users", "https://api.example.com:80/v1/users"])
    func aCredentialForAnHTTPSHostIsNotAttachedToAnotherSchemeOrPort(url: String) async throws {
        #expect(try scheme(for: url, rule: "api.example.com") == .none)
        #expect(try !AuthorizationRule(host: "api.example.com", scheme: .bearer).matches(request(url)))

        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(host: "api.example.com", scheme: .bearer))
        let transport = RecordingTransport()
        let client = AuthorizedHTTPClient(authorizer: try RequestAuthorizer(policy: policy, providers: [.bearer: ScriptedProvider(.token("tok"))],
                                                                            diagnostics: RecordingDiagnosticsSink()), transport: transport)
        _ = try? await client.send(try request(url))
        #expect(transport.requests.allSatisfy { $0.value(forHeader: "Authorization") == nil })
    }

    @Test(arguments: ["https://api.example.com/v1/users", "https://api.example.com:443/v1/users", "HTTPS://API.example.com/v1/users",
                      "https://api.example.com./v1/users"])
    func aCredentialForAnHTTPSHostIsAttachedOnTheDefaultPort(url: String) throws {
        #expect(try scheme(for: url, rule: "api.example.com") == .bearer)
        #expect(try scheme(for: url, rule: "https://api.example.com") == .bearer)
        #expect(try scheme(for: url, rule: "https://api.example.com:443") == .bearer)
    }

    @Test func aPatternWithAPortMatchesThatPortOnly() throws {
        #expect(try scheme(for: "https://api.example.com:8443/x", rule: "api.example.com:8443") == .bearer)
        #expect(try scheme(for: "https://api.example.com:8443/x", rule: "https://api.example.com:8443") == .bearer)
        for url in ["https://api.example.com/x", "https://api.example.com:443/x", "https://api.example.com:8444/x", "http://api.example.com:8443/x"] {
            #expect(try scheme(for: url, rule: "api.example.com:8443") == .none, "\(url)")
        }
    }

    @Test func anHTTPLoopbackPatternMatchesHTTPOnItsPortOnly() throws {
        #expect(try scheme(for: "http://127.0.0.1:8080/x", rule: "http://127.0.0.1:8080") == .bearer)
        for url in ["https://127.0.0.1:8080/x", "http://127.0.0.1/x", "http://127.0.0.1:8081/x", "http://127.0.0.2:8080/x", "http://localhost:8080/x"] {
            #expect(try scheme(for: url, rule: "http://127.0.0.1:8080") == .none, "\(url)")
        }
        #expect(try scheme(for: "http://localhost/x", rule: "http://localhost") == .bearer)
        #expect(try scheme(for: "http://localhost:80/x", rule: "http://localhost") == .bearer)
        #expect(try scheme(for: "https://localhost/x", rule: "http://localhost") == .none)
    }

    @Test func aLoopbackPatternWithoutSchemeOrPortMatchesHTTPSOnTheDefaultPortOnly() throws {
        #expect(try scheme(for: "https://127.0.0.1/x", rule: "127.0.0.1") == .bearer)
        #expect(try scheme(for: "http://127.0.0.1:54321/x", rule: "127.0.0.1") == .none)
        #expect(try scheme(for: "http://127.0.0.1/x", rule: "127.0.0.1") == .none)
    }

    @Test func aBracketedIPv6PatternTakesAPortAfterTheBracket() throws {
        #expect(try scheme(for: "https://[::1]:8080/x", rule: "[::1]:8080") == .bearer)
        #expect(try scheme(for: "http://[::1]:8080/x", rule: "http://[::1]:8080") == .bearer)
        #expect(try scheme(for: "http://[::1]:8081/x", rule: "http://[::1]:8080") == .none)
        #expect(try scheme(for: "https://[::1]/x", rule: "[::1]:8080") == .none)
        #expect(try scheme(for: "https://[2001:db8::1]:8443/x", rule: "[2001:db8::1]:8443") == .bearer)
    }

    @Test func aWildcardPatternTakesASchemeAndAPort() throws {
        #expect(try scheme(for: "https://a.example.com:8443/x", rule: "https://*.example.com:8443") == .bearer)
        #expect(try scheme(for: "https://a.b.example.com:8443/x", rule: "*.example.com:8443") == .bearer)
        #expect(try scheme(for: "https://a.example.com/x", rule: "*.example.com:8443") == .none)
        #expect(try scheme(for: "https://example.com:8443/x", rule: "*.example.com:8443") == .none)
        #expect(try scheme(for: "http://a.example.com/x", rule: "*.example.com") == .none)
        #expect(try scheme(for: "https://a.example.com/x", rule: "*.example.com") == .bearer)
    }

    @Test func theIDTokenIsNotSentToAnotherSchemeOrPort() async throws {
        let store = try IDTokenStore(authorizedDomains: ["*.rover.io", "api.example.com:8443", "http://localhost:8080"], clock: ManualClock(),
                                     diagnostics: RecordingDiagnosticsSink())
        try store.setIDToken("id-token")
        func credential(_ url: String) async throws -> Credential {
            try await store.credential(for: AuthorizationContext(endpoint: "x", url: try #require(URL(string: url))))
        }
        for url in ["http://api.rover.io/x", "https://api.rover.io:8443/x", "ftp://api.rover.io/x", "https://api.example.com/x",
                    "http://api.example.com:8443/x", "https://localhost:8080/x", "http://localhost/x", "http://localhost:8081/x"] {
            #expect(try await credential(url) == .omitted, "\(url)")
        }
        for url in ["https://api.rover.io/x", "https://api.rover.io:443/x", "https://api.example.com:8443/x", "http://localhost:8080/x"] {
            #expect(try await credential(url) == .bearer("id-token"), "\(url)")
        }
    }

    @Test func aRejectionFromAnotherSchemeDoesNotMarkTheIDTokenStale() async throws {
        let store = try IDTokenStore(authorizedDomains: ["api.rover.io"], clock: ManualClock(), diagnostics: RecordingDiagnosticsSink())
        let context = AuthorizationContext(endpoint: "x", url: try #require(URL(string: "http://api.rover.io/x")))
        #expect(await store.credentialRejected(.bearer("t"), response: ServerResponse(statusCode: 401), context: context) == .fail)
    }

    @Test(arguments: [
        ("api.example.com", "api.example.com"), ("https://api.example.com", "api.example.com"), ("https://API.example.com:443", "api.example.com"),
        ("*.rover.io", "*.rover.io"), ("api.example.com:8443", "api.example.com:8443"), ("http://127.0.0.1:8080", "http://127.0.0.1:8080"),
        ("http://localhost:80", "http://localhost"), ("HTTP://LocalHost.", "http://localhost"), ("[::1]", "[::1]"), ("http://[::1]:8080", "http://[::1]:8080"),
        ("https://*.example.com:8443", "*.example.com:8443"), ("http://127.0.0.1:443", "http://127.0.0.1:443"), ("localhost:80", "localhost:80"),
    ])
    func theDescriptionNamesTheSchemeAndPortOnlyWhenNotTheDefaults(pattern: String, description: String) throws {
        let domain = try AuthorizedDomain(pattern)
        #expect(domain.description == description)
        #expect(try AuthorizedDomain(domain.description) == domain)
    }

    @Test func equalityTakesTheSchemeAndPortIntoAccount() throws {
        #expect(try AuthorizedDomain("api.example.com") == AuthorizedDomain("https://api.example.com:443"))
        #expect(try AuthorizedDomain("api.example.com") != AuthorizedDomain("api.example.com:8443"))
        #expect(try AuthorizedDomain("http://localhost") != AuthorizedDomain("localhost"))
        #expect(try AuthorizedDomain("http://localhost:443") != AuthorizedDomain("localhost"))
        #expect(try Set([AuthorizedDomain("localhost"), AuthorizedDomain("https://localhost"), AuthorizedDomain("localhost:8443")]).count == 2)
    }

    // MARK: Origins

    @Test(arguments: [
        ("https://api.example.com/v2?x=1", "api.example.com"), ("https://api.example.com:443", "api.example.com"), ("https://api.example.com:8443", "api.example.com:8443"),
        ("http://127.0.0.1:8080/api/", "http://127.0.0.1:8080"), ("http://[::1]:8080", "http://[::1]:8080"), ("HTTP://LocalHost.", "http://localhost"),
        ("https://user:secret@api.example.com/", "api.example.com"), ("https://[2001:db8::1]", "[2001:db8::1]"),
    ])
    func anOriginGivesItsSchemeHostAndPort(url: String, description: String) throws {
        let domain = try AuthorizedDomain(origin: #require(URL(string: url)))
        #expect(domain.description == description)
        #expect(try domain == AuthorizedDomain(description))
    }

    @Test func anOriginMatchesItsSchemeAndPortOnly() throws {
        let domain = try AuthorizedDomain(origin: #require(URL(string: "http://127.0.0.1:8080/api")))
        #expect(domain.matches(try #require(URL(string: "http://127.0.0.1:8080/other/path"))))
        for url in ["http://127.0.0.1:8081/api", "https://127.0.0.1:8080/api", "http://127.0.0.1/api", "http://localhost:8080/api"] {
            #expect(!domain.matches(try #require(URL(string: url))), "\(url)")
        }
    }

    /// The message an origin is refused with.
    private func originRefusal(_ url: String) throws -> String? {
        do {
            _ = try AuthorizedDomain(origin: #require(URL(string: url)))
            return nil
        } catch let error as ConfigurationError {
            #expect(error.code == .invalidValue)
            #expect(error.key == "authorizedDomains")
            return error.reason
        }
    }

    @Test(arguments: ["http://api.example.com", "http://user:secret@api.example.com:8080/x?token=abc", "http://10.0.0.1/", "http://[::2]:8080"])
    func anHTTPOriginOnAHostThatIsNotLoopbackIsRefused(url: String) throws {
        let reason = try originRefusal(url)
        #expect(reason == "\(LogText.escaped(ConfigurationError.sanitizedURLText(url), limit: 100)) uses http, which is allowed only on a loopback host (localhost, 127.0.0.0/8, [::1]); use https")
        #expect(reason?.contains("secret") == false && reason?.contains("abc") == false)
    }

    @Test(arguments: ["ftp://api.example.com", "wss://api.example.com/socket", "file:///tmp/x", "/relative/path"])
    func anOriginThatIsNotHTTPSOrHTTPIsRefused(url: String) throws {
        #expect(try originRefusal(url) == "\(LogText.escaped(ConfigurationError.sanitizedURLText(url), limit: 100)) is not an https URL (or an http URL on a loopback host)")
    }

    @Test(arguments: ["https://api%2Eexample.com", "https://my_service.example", "https:///path"])
    func anOriginWithoutAHostNameIsRefused(url: String) throws {
        #expect(try originRefusal(url) == "\(LogText.escaped(ConfigurationError.sanitizedURLText(url), limit: 100)) names no host name (letters, digits and '-' in labels of at most 63 characters), IPv4 address or IPv6 address")
    }

    @Test func anOriginOnPortZeroIsRefused() throws {
        #expect(try originRefusal("https://api.example.com:0") == "'https://api.example.com:0' has a port that is not a number from 1 to 65535")
    }

    @Test func aRuleForAnOriginMatchesItsSchemeHostAndPort() throws {
        let rule = try AuthorizationRule(origin: #require(URL(string: "http://127.0.0.1:8080/api")), path: "/braze/**", scheme: AuthorizationScheme("signature"))
        #expect(rule.description == "* http://127.0.0.1:8080/braze/** -> signature")
        #expect(rule.matches(try request("http://127.0.0.1:8080/braze/apps/1/data")))
        #expect(!rule.matches(try request("http://127.0.0.1:8081/braze/apps/1/data")))
        #expect(!rule.matches(try request("https://127.0.0.1:8080/braze/apps/1/data")))
        #expect(!rule.matches(try request("http://127.0.0.1:8080/api/braze/apps/1/data")))
        #expect(throws: ConfigurationError.invalidValue(key: "rule host", reason: "'http://api.example.com/' uses http, which is allowed only on a loopback host (localhost, 127.0.0.0/8, [::1]); use https")) {
            try AuthorizationRule(origin: #require(URL(string: "http://api.example.com/")), scheme: .bearer)
        }
    }

    @Test func theIDTokenGoesToTheOriginItWasGivenOnly() async throws {
        let store = try IDTokenStore(authorizedDomains: [AuthorizedDomain(origin: #require(URL(string: "http://localhost:8080")))], clock: ManualClock(),
                                     diagnostics: RecordingDiagnosticsSink())
        try store.setIDToken("id-token")
        func credential(_ url: String) async throws -> Credential {
            try await store.credential(for: AuthorizationContext(endpoint: "x", url: try #require(URL(string: url))))
        }
        #expect(try await credential("http://localhost:8080/rover/ticketing") == .bearer("id-token"))
        #expect(try await credential("http://127.0.0.1:8080/rover/ticketing") == .omitted)
        #expect(try await credential("http://localhost:8081/rover/ticketing") == .omitted)
        #expect(try await credential("https://localhost:8080/rover/ticketing") == .omitted)
    }

    // MARK: Refusals, one per message

    @Test(arguments: ["http://api.example.com", "http://*.example.com", "http://127.0.0.1.example.com:8080", "http://[::2]", "http://10.0.0.1:8080",
                      "http://*.localhost", "http://localhost.example.com"])
    func anHTTPPatternOnAHostThatIsNotLoopbackIsRefused(pattern: String) {
        #expect(refusal(pattern) == "\(LogText.escaped(pattern, limit: 100)) uses http, which is allowed only on a loopback host (localhost, 127.0.0.0/8, [::1]); name the host alone, or with https://")
    }

    @Test(arguments: ["ftp://api.example.com", "wss://api.example.com", "file://localhost", "://api.example.com", "ht\ntp://api.example.com"])
    func aPatternNamingAnotherSchemeIsRefused(pattern: String) {
        #expect(refusal(pattern) == "\(LogText.escaped(pattern, limit: 100)) names a scheme other than https, or http on a loopback host")
    }

    @Test(arguments: ["api.example.com:0", "api.example.com:65536", "api.example.com:abc", "api.example.com:-1", "api.example.com:+80",
                      "[::1]:99999999999999999999", "https://*.example.com:8 443", "http://localhost:0"])
    func aPortThatIsNotANumberFrom1To65535IsRefused(pattern: String) {
        #expect(refusal(pattern) == "\(LogText.escaped(pattern, limit: 100)) has a port that is not a number from 1 to 65535")
    }

    @Test(arguments: ["api.example.com:", "https://api.example.com:", "[::1]:"])
    func anEmptyPortIsRefused(pattern: String) {
        #expect(refusal(pattern) == "\(LogText.escaped(pattern, limit: 100)) names no port after the ':'")
    }

    @Test(arguments: ["::1", "fe80::1", "::1:8080", "https://::1", "api.example.com:80:80"])
    func anIPv6AddressOutsideBracketsIsRefused(pattern: String) {
        #expect(refusal(pattern) == "\(LogText.escaped(pattern, limit: 100)) holds more than one ':': write an IPv6 address in brackets, as [::1] or [::1]:8080")
    }

    @Test(arguments: ["https://api.example.com/", "api.example.com/v1", "http://localhost:8080/api"])
    func aPatternWithAPathIsRefused(pattern: String) {
        #expect(refusal(pattern) == "\(LogText.escaped(pattern, limit: 100)) holds a path: name only the host, with an optional scheme and port ([scheme://]host[:port])")
    }

    @Test(arguments: ["https://", "http://:8080", ":443", "https://*."])
    func aPatternWithoutAHostIsRefused(pattern: String) {
        #expect(refusal(pattern) == "\(LogText.escaped(pattern, limit: 100)) names no host")
    }

    @Test func aRuleNamesItsKeyInTheRefusal() {
        #expect(throws: ConfigurationError.invalidValue(key: "rule host", reason: "'http://api.example.com' uses http, which is allowed only on a loopback host (localhost, 127.0.0.0/8, [::1]); name the host alone, or with https://")) {
            try AuthorizationRule(host: "http://api.example.com", scheme: .bearer)
        }
    }
}
