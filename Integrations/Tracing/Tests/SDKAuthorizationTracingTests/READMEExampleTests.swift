import Foundation
import READMEExampleSupport
import SDKAuthorization
import SDKAuthorizationEngagement
import SDKAuthorizationIDToken
import SDKAuthorizationTracing
import Testing
import Tracing

// The example in this adapter's DocC article (SDKAuthorizationTracing.md), verbatim inside a function, so it
// keeps compiling; the first test checks that the article still says the same.

enum TracingExample {
    static func run(configuration: AuthorizationConfiguration) throws -> AuthorizedHTTPClient {
        let tracing = TracingEventObserver()
        let idTokens = try IDTokenStore(authorizedDomains: ["*.rover.io"], observer: tracing)
        idTokens.registerTokenRefresh { try await fetchIDToken() }   // spans sdkauth.refresh and sdkauth.token_wait
        let client = try AuthorizedHTTPClient(configuration: configuration, provider: idTokens, observer: tracing)
        return client
    }

    static func fetchIDToken() async throws -> String { "" }
}

@Suite("DocC example of the Tracing adapter", .timeLimit(.minutes(3)))
struct READMEExampleTests {
    @Test func theExampleInTheAdaptersArticleIsTheCodeCompiledHere() throws {
        let expected = try READMEExample.block(article: "Integrations/Tracing/Sources/SDKAuthorizationTracing/SDKAuthorizationTracing.docc/SDKAuthorizationTracing.md")
        #expect((3...6).contains(expected.count), "SDKAuthorizationTracing.md: \(expected.count) lines")
        #expect(try READMEExample.isCompiled(expected, in: "TracingExample", ofFile: #filePath), "SDKAuthorizationTracing.md: the article's block differs from TracingExample here")
    }

    @Test func theExampleBuildsItsClient() throws {
        let configuration = try AuthorizationConfiguration(projectToken: "p", baseURL: "https://api.rover.io", authorization: "Token k", advancedAuthEnabled: true)
        #expect(try TracingExample.run(configuration: configuration).provider is IDTokenStore)
    }
}
