import Foundation
import Metrics
import READMEExampleSupport
import SDKAuthorization
import SDKAuthorizationEngagement
import SDKAuthorizationMetrics
import Testing

// The example in this adapter's DocC article (SDKAuthorizationMetrics.md), verbatim inside a function, so it
// keeps compiling; the first test checks that the article still says the same.

enum MetricsExample {
    static func run(configuration: AuthorizationConfiguration, provider: any AuthorizationProvider) throws -> AuthorizedHTTPClient {
        // Counts into the factory in scope now (withMetricsFactory, else the bootstrapped one).
        let metrics = MetricsEventObserver()
        let client = try AuthorizedHTTPClient(configuration: configuration, provider: provider, observer: metrics)
        // sdkauth_requests_authorized_total{sdkauth.scheme="bearer"}, sdkauth_credential_rejections_total{sdkauth.scheme,http.response.status_code}, ...
        return client
    }
}

@Suite("DocC example of the Metrics adapter", .timeLimit(.minutes(3)))
struct READMEExampleTests {
    @Test func theExampleInTheAdaptersArticleIsTheCodeCompiledHere() throws {
        let expected = try READMEExample.block(article: "Integrations/Metrics/Sources/SDKAuthorizationMetrics/SDKAuthorizationMetrics.docc/SDKAuthorizationMetrics.md")
        #expect((3...6).contains(expected.count), "SDKAuthorizationMetrics.md: \(expected.count) lines")
        #expect(try READMEExample.isCompiled(expected, in: "MetricsExample", ofFile: #filePath), "SDKAuthorizationMetrics.md: the article's block differs from MetricsExample here")
    }

    @Test func theExampleBuildsItsClient() throws {
        let configuration = try AuthorizationConfiguration(projectToken: "p", baseURL: "https://api.rover.io", authorization: "Token k", advancedAuthEnabled: true)
        struct Provider: AuthorizationProvider {
            func credential(for context: AuthorizationContext) async throws -> Credential { .bearer("a.b.c") }
        }
        #expect(try MetricsExample.run(configuration: configuration, provider: Provider()).provider is Provider)
    }
}
