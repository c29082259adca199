import Foundation
import Metrics
import READMEExampleSupport
import SDKAuthorization
import SDKAuthorizationEngagement
import SDKAuthorizationMetrics
import Testing

// The README's example of this adapter ("### swift-metrics"), verbatim inside a function, so it keeps
// compiling; the first test checks that the README still says the same.

enum MetricsExample {
    static func run(configuration: AuthorizationConfiguration, provider: any AuthorizationProvider) throws -> AuthorizedHTTPClient {
        // Counts into the factory in scope now (withMetricsFactory, else the bootstrapped one).
        let metrics = MetricsEventObserver()
        let client = try AuthorizedHTTPClient(configuration: configuration, provider: provider, observer: metrics)
        // sdkauth_requests_authorized_total{sdkauth.scheme="bearer"}, sdkauth_credential_rejections_total{sdkauth.scheme,http.response.status_code}, ...
        return client
    }
}

@Suite("README example of the Metrics adapter", .timeLimit(.minutes(3)))
struct READMEExampleTests {
    @Test func theAdaptersExampleInTheREADMEIsTheCodeCompiledHere() throws {
        let expected = try READMEExample.block(section: "### swift-metrics")
        #expect((3...6).contains(expected.count), "### swift-metrics: \(expected.count) lines")
        #expect(try READMEExample.isCompiled(expected, in: "MetricsExample", ofFile: #filePath), "### swift-metrics: the README block differs from MetricsExample here")
    }

    @Test func theExampleBuildsItsClient() throws {
        let configuration = try AuthorizationConfiguration(projectToken: "p", baseURL: "https://api.rover.io", authorization: "Token k", advancedAuthEnabled: true)
        struct Provider: AuthorizationProvider {
            func credential(for context: AuthorizationContext) async throws -> Credential { .bearer("a.b.c") }
        }
        #expect(try MetricsExample.run(configuration: configuration, provider: Provider()).provider is Provider)
    }
}
