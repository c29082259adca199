import Foundation
import Logging
import READMEExampleSupport
import SDKAuthorization
import SDKAuthorizationEngagement
import SDKAuthorizationLogging
import Testing

// The README's example of this adapter ("### swift-log"), verbatim inside a function, so it keeps
// compiling; the first test checks that the README still says the same.

enum SwiftLogExample {
    static func run(configuration: AuthorizationConfiguration, provider: any AuthorizationProvider) throws -> AuthorizedHTTPClient {
        let logger = Logger(label: "my-sdk.auth")
        let client = try AuthorizedHTTPClient(configuration: configuration, provider: provider,
                                              diagnostics: SwiftLogDiagnosticsSink(logger: logger))
        // warning: appInboxFetch was rejected with HTTP 401 (...) sdkauth.endpoint=appInboxFetch sdkauth.event=credentialRejected sdkauth.scheme=bearer
        return client
    }
}

@Suite("README example of the Logging adapter", .timeLimit(.minutes(3)))
struct READMEExampleTests {
    @Test func theAdaptersExampleInTheREADMEIsTheCodeCompiledHere() throws {
        let expected = try READMEExample.block(section: "### swift-log")
        #expect((3...6).contains(expected.count), "### swift-log: \(expected.count) lines")
        #expect(try READMEExample.isCompiled(expected, in: "SwiftLogExample", ofFile: #filePath), "### swift-log: the README block differs from SwiftLogExample here")
    }

    @Test func theExampleBuildsItsClient() throws {
        let configuration = try AuthorizationConfiguration(projectToken: "p", baseURL: "https://api.rover.io", authorization: "Token k", advancedAuthEnabled: true)
        struct Provider: AuthorizationProvider {
            func credential(for context: AuthorizationContext) async throws -> Credential { .bearer("a.b.c") }
        }
        #expect(try SwiftLogExample.run(configuration: configuration, provider: Provider()).provider is Provider)
    }
}
