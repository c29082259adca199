import Foundation
import SDKAuthorization
import Testing
import TestTimeLimit

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
