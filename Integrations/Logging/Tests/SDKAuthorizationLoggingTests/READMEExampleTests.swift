import Foundation
import Logging
import READMEExampleSupport
import SDKAuthorization
import SDKAuthorizationEngagement
import SDKAuthorizationLogging
import Testing

// The example in this adapter's DocC article (SDKAuthorizationLogging.md), verbatim inside a function, so it
// keeps compiling; the first test checks that the article still says the same.

enum SwiftLogExample {
    static func run(configuration: AuthorizationConfiguration, provider: any AuthorizationProvider) throws -> AuthorizedHTTPClient {
        let logger = Logger(label: "my-sdk.auth")
        let client = try AuthorizedHTTPClient(configuration: configuration, provider: provider,
                                              diagnostics: SwiftLogDiagnosticsSink(logger: logger))
        // warning: appInboxFetch was rejected with HTTP 401 (...) sdkauth.endpoint=appInboxFetch sdkauth.event=credentialRejected sdkauth.scheme=bearer
        return client
    }
}

@Suite("DocC example of the Logging adapter", .timeLimit(.minutes(3)))
struct READMEExampleTests {
    @Test func theExampleInTheAdaptersArticleIsTheCodeCompiledHere() throws {
        let expected = try READMEExample.block(article: "Integrations/Logging/Sources/SDKAuthorizationLogging/SDKAuthorizationLogging.docc/SDKAuthorizationLogging.md")
        #expect((3...6).contains(expected.count), "SDKAuthorizationLogging.md: \(expected.count) lines")
        #expect(try READMEExample.isCompiled(expected, in: "SwiftLogExample", ofFile: #filePath), "SDKAuthorizationLogging.md: the article's block differs from SwiftLogExample here")
    }

    @Test func theExampleBuildsItsClient() throws {
        let configuration = try AuthorizationConfiguration(projectToken: "p", baseURL: "https://api.rover.io", authorization: "Token k", advancedAuthEnabled: true)
        struct Provider: AuthorizationProvider {
            func credential(for context: AuthorizationContext) async throws -> Credential { .bearer("a.b.c") }
        }
        #expect(try SwiftLogExample.run(configuration: configuration, provider: Provider()).provider is Provider)
    }
}
