import AsyncHTTPClient
import Foundation
import READMEExampleSupport
import SDKAuthorization
import SDKAuthorizationAsyncHTTPClient
import SDKAuthorizationEngagement
import Testing

// The example in this adapter's DocC article (SDKAuthorizationAsyncHTTPClient.md), verbatim inside a function, so it
// keeps compiling; the first test checks that the article still says the same.

enum AsyncHTTPClientExample {
    static func run(configuration: AuthorizationConfiguration, provider: any AuthorizationProvider, body: Data) async throws -> ServerResponse {
        let transport = AsyncHTTPClientHTTPTransport(timeout: .seconds(30))
        let client = try AuthorizedHTTPClient(configuration: configuration, provider: provider, transport: transport)
        let inbox = try await client.send(.appInboxFetch, body: body)
        return inbox
    }
}

@Suite("DocC example of the AsyncHTTPClient adapter", .timeLimit(.minutes(3)))
struct READMEExampleTests {
    @Test func theExampleInTheAdaptersArticleIsTheCodeCompiledHere() throws {
        let expected = try READMEExample.block(article: "Integrations/AsyncHTTPClient/Sources/SDKAuthorizationAsyncHTTPClient/SDKAuthorizationAsyncHTTPClient.docc/SDKAuthorizationAsyncHTTPClient.md")
        #expect((3...6).contains(expected.count), "SDKAuthorizationAsyncHTTPClient.md: \(expected.count) lines")
        #expect(try READMEExample.isCompiled(expected, in: "AsyncHTTPClientExample", ofFile: #filePath), "SDKAuthorizationAsyncHTTPClient.md: the article's block differs from AsyncHTTPClientExample here")
    }
}
