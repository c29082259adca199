import AsyncHTTPClient
import Foundation
import READMEExampleSupport
import SDKAuthorization
import SDKAuthorizationAsyncHTTPClient
import SDKAuthorizationEngagement
import Testing

// The README's example of this adapter ("### AsyncHTTPClient transport"), verbatim inside a function, so it keeps
// compiling; the first test checks that the README still says the same.

enum AsyncHTTPClientExample {
    static func run(configuration: AuthorizationConfiguration, provider: any AuthorizationProvider, body: Data) async throws -> ServerResponse {
        let transport = AsyncHTTPClientHTTPTransport(timeout: .seconds(30))
        let client = try AuthorizedHTTPClient(configuration: configuration, provider: provider, transport: transport)
        let inbox = try await client.send(.appInboxFetch, body: body)
        return inbox
    }
}

@Suite("README example of the AsyncHTTPClient adapter", .timeLimit(.minutes(3)))
struct READMEExampleTests {
    @Test func theAdaptersExampleInTheREADMEIsTheCodeCompiledHere() throws {
        let expected = try READMEExample.block(section: "### AsyncHTTPClient transport")
        #expect((3...6).contains(expected.count), "### AsyncHTTPClient transport: \(expected.count) lines")
        #expect(try READMEExample.isCompiled(expected, in: "AsyncHTTPClientExample", ofFile: #filePath), "### AsyncHTTPClient transport: the README block differs from AsyncHTTPClientExample here")
    }
}
