import Foundation
import SDKAuthorizationModeKit
import SDKAuthorizationTesting
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationEngagement

/// Host patterns that are not host names, IPv4 literals or bracketed IPv6 literals.
let malformedHostPatterns = [
    "-api.example.com", "api-.example.com", "api.-x.example", "1.2.3", "256.1.1.1", "01.2.3.4", "1.2.3.4.5", "::1", "fe80::1",
    "[::g]", "[1::2::3]", "[1:2:3:4:5:6:7:8:9]", "[fe80::1%25en0]", "*.127.0.0.1", "*.[::1]",
    String(repeating: "a", count: 64) + ".example.com", Array(repeating: "abcdefghi", count: 26).joined(separator: "."),
    "api.example.com\u{0}", "b\u{FC}cher.example", "api.example.com%2F", "api\nexample.com",
]

/// Host patterns that are.
let wellFormedHostPatterns = [
    "api.example.com", "API.Example.com.", "*.example.com", "localhost", "a-b.example", "xn--bcher-kva.example", "1password.com",
    "127.0.0.1", "127.0.0.1.", "[::1]", "[2001:db8::1]", "[::ffff:127.0.0.1]", "[2001:db8:0:0:0:0:0:1]", String(repeating: "a", count: 63) + ".example.com",
]

@Suite("Hostile input: hosts", .hangLimit)
struct HostValidationTests {
    @Test(arguments: malformedHostPatterns)
    func authorizedDomainThatIsNotAHostIsRefusedNamingItEscaped(pattern: String) {
        #expect {
            try AuthorizedDomain(pattern)
        } throws: { error in
            guard let error = error as? ConfigurationError, error.code == .invalidValue, error.key == "authorizedDomains", let reason = error.reason else { return false }
            return reason.contains(LogText.escaped(pattern, limit: 100)) && !reason.contains("\n") && !reason.contains("\u{0}") && reason.utf8.count < 300
        }
    }

    @Test(arguments: malformedHostPatterns)
    func ruleHostThatIsNotAHostIsRefusedNamingItEscaped(pattern: String) {
        #expect {
            try AuthorizationRule(host: pattern, scheme: .bearer)
        } throws: { error in
            guard let error = error as? ConfigurationError, error.code == .invalidValue, error.key == "rule host", let reason = error.reason else { return false }
            return reason.contains(LogText.escaped(pattern, limit: 100)) && !reason.contains("\n") && reason.utf8.count < 300
        }
    }

    @Test func aVeryLongHostPatternIsNamedCutShort() {
        let pattern = String(repeating: "x", count: 10_000) + "\n.example.com"
        #expect {
            try AuthorizedDomain(pattern)
        } throws: { error in
            guard let error = error as? ConfigurationError, error.code == .invalidValue, let reason = error.reason else { return false }
            return reason.utf8.count < 300 && reason.contains("xxxxx")
        }
    }

    @Test(arguments: wellFormedHostPatterns)
    func hostNamesAndAddressLiteralsAreAccepted(pattern: String) throws {
        // A host the pattern names: the wildcard's label filled in.
        let url = try #require(URL(string: "https://\(pattern.replacingOccurrences(of: "*.", with: "a."))/x"))
        let domain = try AuthorizedDomain(pattern)
        #expect(domain.matches(url))
        #expect(!domain.matches(try #require(URL(string: "https://other.example.net/x"))))
        let rule = try AuthorizationRule(host: pattern, scheme: .bearer)
        #expect(rule.matches(OutgoingRequest(method: "GET", url: url)))
    }

    /// Request URLs whose host decodes to the right suffix around a character no host can hold.
    static let smuggledHosts = [
        "https://evil%2F.example.com/x", "https://x%00.example.com/x", "https://attacker.test%40api.example.com/x",
        "https://api%2Eexample.com/x", "https://API%2eEXAMPLE.com/x",
    ]

    @Test(arguments: smuggledHosts)
    func requestHostHoldingAPercentNeverMatchesARule(url: String) throws {
        let request = OutgoingRequest(method: "GET", url: try #require(URL(string: url)))
        #expect(try !AuthorizationRule(host: "*.example.com", scheme: .bearer).matches(request))
        #expect(try !AuthorizationRule(host: "api.example.com", scheme: .bearer).matches(request))
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(host: "*.example.com", scheme: .bearer))
        policy.add(try AuthorizationRule(host: "api.example.com", scheme: .bearer))
        let authorizer = try RequestAuthorizer(policy: policy, providers: [.bearer: ScriptedProvider(.token("tok"))], diagnostics: RecordingDiagnosticsSink())
        #expect(authorizer.scheme(for: request).scheme == .none)
    }

    @Test(arguments: smuggledHosts.filter { !$0.contains("%2E") && !$0.contains("%2e") })
    func requestHostHoldingACharacterNoHostCanHoldNeverMatchesADomain(url: String) throws {
        let host = try #require(URL(string: url)?.host)
        #expect(try !AuthorizedDomain("*.example.com").matches(host))
        #expect(try !AuthorizedDomain("api.example.com").matches(host))
    }

    @Test(arguments: ["https://api%2Eexample.com/track/v2/projects/project-1/customers", "https://api.example.com%00/track/v2/projects/project-1/customers",
                      "https://api.example.com%2F/track/v2/projects/project-1/customers"])
    func requestHostHoldingAPercentNeverMatchesACatalogueOrigin(url: String) throws {
        let authorizer = try RequestAuthorizer(policy: .engagement(advancedAuthEnabled: false), providers: [.apiKey: ScriptedProvider(.credential(.authorization(scheme: "Token", "key")))],
                                               baseURL: URL(string: "https://api.example.com"), pathParameters: ["projectToken": "project-1"],
                                               diagnostics: RecordingDiagnosticsSink())
        let request = OutgoingRequest(method: "POST", url: try #require(URL(string: url)))
        #expect(authorizer.scheme(for: request).endpoint == nil)
        #expect(authorizer.scheme(for: OutgoingRequest(method: "POST", url: try #require(URL(string: "https://api.example.com/track/v2/projects/project-1/customers")))).endpoint == .trackCustomers)
    }

    @Test(arguments: ["localhost", "LocalHost", "localhost.", "127.0.0.1", "127.255.255.254", "127.0.0.1.", "[::1]", "::1", "[0:0:0:0:0:0:0:1]",
                      "[0::1]", "[::0001]"])
    func loopbackHostsAreKnownByTheirTextAlone(host: String) {
        #expect(HostName.isLoopback(host))
    }

    @Test(arguments: ["localhost.example.com", "my-localhost", "128.0.0.1", "127.1", "127.0.0.01", "127.0.0.1.example.com", "10.0.0.1", "[::2]",
                      "[1::]", "[::1:0]", "[1::1]", "[::ffff:127.0.0.1]", "", "local%68ost", "localhost:8080", "[::1]:8080", "*.localhost"])
    func otherHostsAreNotLoopback(host: String) {
        #expect(!HostName.isLoopback(host))
    }

    @Test func aLoopbackRuleMatchesTheSchemeAndPortItNames() throws {
        let rule = try AuthorizationRule(host: "http://127.0.0.1:54321", scheme: .bearer)
        #expect(rule.matches(OutgoingRequest(method: "GET", url: try #require(URL(string: "http://127.0.0.1:54321/x")))))
        #expect(!rule.matches(OutgoingRequest(method: "GET", url: try #require(URL(string: "http://127.0.0.1:54322/x")))))
        #expect(try AuthorizationRule(host: "http://[::1]:8080", scheme: .bearer).matches(OutgoingRequest(method: "GET", url: try #require(URL(string: "http://[::1]:8080/x")))))
        #expect(try !AuthorizationRule(host: "127.0.0.1", scheme: .bearer).matches(OutgoingRequest(method: "GET", url: try #require(URL(string: "http://127.0.0.1:54321/x")))))
    }

    @Test(arguments: ["https://api%2Eexample.com", "https://api.example.com%00", "https://evil%2F.example.com", "http://my_service:8080", "https://-api.example.com",
                      "https://[fe80::1%25en0]"])
    func baseURLWhoseHostIsNotAHostIsRefusedAtConfiguration(value: String) {
        #expect(throws: ConfigurationError.invalidBaseURL(ConfigurationError.sanitizedURLText(value))) {
            try AuthorizationConfiguration(projectToken: "p1", baseURL: value, authorization: "Token key")
        }
    }

    @Test(arguments: ["https://cdn%2Eexample.com/v1/<projectToken>/content", "https://cdn_1.example.com/x", "https://cdn.example.com%2F/x"])
    func absoluteEndpointWhoseHostIsNotAHostIsRefused(template: String) {
        var policy = AuthorizationPolicy()
        #expect {
            try policy.add(Endpoint("content", method: "GET", path: template), scheme: .bearer)
        } throws: { error in
            guard let error = error as? ConfigurationError, error.code == .invalidValue, error.key == "endpoint content" else { return false }
            return true
        }
    }

    @Test(arguments: ["http://127.0.0.1:8080", "http://[::1]:8080/api", "https://api.example.com.", "http://localhost:1"])
    func baseURLsWithAddressOrNameHostsStillWork(value: String) async throws {
        let configuration = try AuthorizationConfiguration(projectToken: "p1", baseURL: value, authorization: "Token key")
        let transport = RecordingTransport()
        let client = try AuthorizedHTTPClient(configuration: configuration, transport: transport, diagnostics: RecordingDiagnosticsSink())
        _ = try await client.send(.trackEvents, body: Data("{}".utf8))
        let sent = try #require(transport.requests.first)
        #expect(sent.url.absoluteString.hasPrefix(value))
        #expect(sent.url.path.hasSuffix("/track/v2/projects/p1/customers/events"))
        #expect(sent.value(forHeader: "Authorization") == "Token key")
    }
}
