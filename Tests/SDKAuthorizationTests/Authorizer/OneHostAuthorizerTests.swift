import Foundation
import SDKAuthorization
import SDKAuthorizationTesting
import Testing
import TestSupport

@Suite("One host, one credential: the common case in one call", .hangLimit)
struct OneHostAuthorizerTests {
    private func headers(_ authorizer: RequestAuthorizer, _ url: String) async throws -> [String: String] {
        try await authorizer.authorize(OutgoingRequest(method: "GET", url: URL(string: url)!)).request.headers
    }

    @Test func aBearerTokenGoesToTheNamedHostAndToNoOther() async throws {
        let authorizer = try RequestAuthorizer(host: "api.example.com") { "token-1" }
        #expect(try await headers(authorizer, "https://api.example.com/v1/me")["Authorization"] == "Bearer token-1")
        #expect(try await headers(authorizer, "https://other.example.com/v1/me")["Authorization"] == nil)
        #expect(try await headers(authorizer, "http://api.example.com/v1/me")["Authorization"] == nil)
    }

    @Test func aLoopbackServerOverHTTPGetsTheTokenWhenTheHostNamesTheScheme() async throws {
        let authorizer = try RequestAuthorizer(host: "http://127.0.0.1:8099") { "token-1" }
        #expect(try await headers(authorizer, "http://127.0.0.1:8099/v1/me")["Authorization"] == "Bearer token-1")
    }

    @Test func aThrowingTokenFunctionFailsTheRequestWithoutSendingIt() async throws {
        struct LoggedOut: Error {}
        let authorizer = try RequestAuthorizer(host: "api.example.com") { throw LoggedOut() }
        await #expect(throws: RequestError.self) { try await headers(authorizer, "https://api.example.com/v1/me") }
    }

    @Test func anAPIKeyGoesUnderItsHeaderToTheNamedHostAndToNoOther() async throws {
        let authorizer = try RequestAuthorizer(host: "api.example.com", apiKey: "key-1", header: "X-API-Key")
        let sent = try await headers(authorizer, "https://api.example.com/v1/items")
        #expect(sent["X-API-Key"] == "key-1")
        #expect(sent["Authorization"] == nil)
        #expect(try await headers(authorizer, "https://evil.example.net/v1/items")["X-API-Key"] == nil)
        #expect(!String(describing: authorizer).contains("key-1"))
    }

    /// The key is a constant that answers at once, so no task bounds the call; the app's token
    /// function may never answer, so the request's deadline bounds it.
    @Test func onlyTheAppsTokenFunctionIsBoundedByTheDeadlineNotAConstantKey() throws {
        let keyed = try RequestAuthorizer(host: "api.example.com", apiKey: "key-1", header: "X-API-Key")
        #expect(keyed.provider(for: .apiKey)?.endsByDeadline == true)
        let tokened = try RequestAuthorizer(host: "api.example.com") { "token-1" }
        #expect(tokened.provider(for: .bearer)?.endsByDeadline == false)
    }

    @Test(arguments: ["", "a\r\nX-Evil: 1"])
    func anAPIKeyAHeaderCannotCarryIsRefusedWhenMade(key: String) {
        #expect(throws: ConfigurationError.self) { try RequestAuthorizer(host: "api.example.com", apiKey: key, header: "X-API-Key") }
    }

    @Test(arguments: ["", "X API Key", "Host", "Content-Length", "X-Key:"])
    func aHeaderNameACredentialMayNotUseIsRefusedWhenMade(header: String) {
        #expect(throws: ConfigurationError.self) { try RequestAuthorizer(host: "api.example.com", apiKey: "key-1", header: header) }
    }

    @Test(arguments: ["", "https://", "api.example.com/v1", "http://api.example.com"])
    func aHostPatternThatIsNotOneIsRefusedWhenMade(host: String) {
        #expect(throws: ConfigurationError.self) { try RequestAuthorizer(host: host) { "token-1" } }
    }
}

@Suite("A rule that refuses a request only for its scheme or port says so", .hangLimit)
struct RuleSchemeOrPortMismatchTests {
    let sink = RecordingDiagnosticsSink()

    private func authorizer(host: String) throws -> RequestAuthorizer {
        try RequestAuthorizer(policy: AuthorizationPolicy(rules: [AuthorizationRule(host: host, scheme: .bearer)]),
                              providers: [.bearer: ScriptedProvider([.credential(.bearer("token-1"))])], diagnostics: sink)
    }

    private func warnings() -> [String] { sink.messages(at: .warning).filter { $0.contains("on another scheme or port") } }

    @Test func aLoopbackRequestOverHTTPUnderARuleWithoutASchemeIsReportedOnceWithTheSpellingThatWorks() async throws {
        let authorizer = try authorizer(host: "127.0.0.1:8099")
        for _ in 0..<3 {
            let sent = try await authorizer.authorize(OutgoingRequest(method: "GET", url: URL(string: "http://127.0.0.1:8099/v1/me?token=SECRET")!))
            #expect(sent.request.headers["Authorization"] == nil)
        }
        #expect(warnings().count == 1)
        #expect(warnings().first?.contains("http://127.0.0.1:8099") == true)
        #expect(warnings().first?.contains("SECRET") == false)
    }

    @Test func anotherPortOfTheRulesHostIsReported() async throws {
        let authorizer = try authorizer(host: "api.example.com")
        _ = try await authorizer.authorize(OutgoingRequest(method: "GET", url: URL(string: "https://api.example.com:8443/v1/me")!))
        #expect(warnings().count == 1)
        #expect(warnings().first?.contains("https://api.example.com:8443") == true)
    }

    @Test func aRequestToAnotherHostOrOneTheRuleMatchesIsNotReported() async throws {
        let authorizer = try authorizer(host: "api.example.com")
        _ = try await authorizer.authorize(OutgoingRequest(method: "GET", url: URL(string: "https://cdn.example.com/a.png")!))
        let matched = try await authorizer.authorize(OutgoingRequest(method: "GET", url: URL(string: "https://api.example.com/v1/me")!))
        #expect(matched.request.headers["Authorization"] == "Bearer token-1")
        #expect(warnings().isEmpty)
    }
}
