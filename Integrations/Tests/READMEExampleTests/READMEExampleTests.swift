import AsyncHTTPClient
import Foundation
import Logging
import Metrics
import SDKAuthorization
import SDKAuthorizationEngagement
import SDKAuthorizationIDToken
import SDKAuthorizationAsyncHTTPClient
import SDKAuthorizationLogging
import SDKAuthorizationMetrics
import SDKAuthorizationTracing
import Testing
import Tracing

// The README's example of each adapter in this package, verbatim inside functions, so they keep
// compiling; `everyAdapterExampleInTheREADMEIsTheCodeCompiledHere` checks that the README still
// says the same. (The OpenAPI middleware's example needs a generated client: Samples compiles it.)

enum AsyncHTTPClientExample {
    static func run(configuration: AuthorizationConfiguration, provider: any AuthorizationProvider, body: Data) async throws -> ServerResponse {
        let transport = AsyncHTTPClientHTTPTransport(timeout: .seconds(30))
        let client = try AuthorizedHTTPClient(configuration: configuration, provider: provider, transport: transport)
        let inbox = try await client.send(.appInboxFetch, body: body)
        return inbox
    }
}

enum SwiftLogExample {
    static func run(configuration: AuthorizationConfiguration, provider: any AuthorizationProvider) throws -> AuthorizedHTTPClient {
        let logger = Logger(label: "my-sdk.auth")
        let client = try AuthorizedHTTPClient(configuration: configuration, provider: provider,
                                              diagnostics: SwiftLogDiagnosticsSink(logger: logger))
        // warning: appInboxFetch was rejected with HTTP 401 (...) sdkauth.endpoint=appInboxFetch sdkauth.event=credentialRejected sdkauth.scheme=bearer
        return client
    }
}

enum MetricsExample {
    static func run(configuration: AuthorizationConfiguration, provider: any AuthorizationProvider) throws -> AuthorizedHTTPClient {
        // Counts into the factory in scope now (withMetricsFactory, else the bootstrapped one).
        let metrics = MetricsEventObserver()
        let client = try AuthorizedHTTPClient(configuration: configuration, provider: provider, observer: metrics)
        // sdkauth_requests_authorized_total{sdkauth.scheme="bearer"}, sdkauth_credential_rejections_total{sdkauth.scheme,http.response.status_code}, ...
        return client
    }
}

enum TracingExample {
    static func run(configuration: AuthorizationConfiguration) throws -> AuthorizedHTTPClient {
        let observer = MultiplexEventObserver([MetricsEventObserver(), TracingEventObserver()])
        let idTokens = try IDTokenStore(authorizedDomains: ["*.rover.io"], observer: observer)
        idTokens.registerTokenRefresh { try await fetchIDToken() }   // spans sdkauth.refresh and sdkauth.token_wait
        let client = try AuthorizedHTTPClient(configuration: configuration, provider: idTokens, observer: observer)
        return client
    }

    static func fetchIDToken() async throws -> String { "" }
}

@Suite("README examples of the adapters", .timeLimit(.minutes(3)))
struct READMEExampleTests {
    static let examples: [(section: String, type: String)] = [
        ("### AsyncHTTPClient transport", "AsyncHTTPClientExample"),
        ("### swift-log", "SwiftLogExample"),
        ("### swift-metrics", "MetricsExample"),
        ("### swift-distributed-tracing", "TracingExample"),
    ]

    @Test func everyAdapterExampleInTheREADMEIsTheCodeCompiledHere() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        func lines(_ text: some StringProtocol) -> [String] {
            text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        let integrations = try #require(readme.components(separatedBy: "\n## Integrations").dropFirst().first?.components(separatedBy: "\n## ").first)
        for (section, type) in Self.examples {
            let text = try #require(integrations.components(separatedBy: "\n" + section).dropFirst().first?.components(separatedBy: "\n### ").first,
                                    "README has no section \(section)")
            let block = try #require(text.components(separatedBy: "```swift\n").dropFirst().first?.components(separatedBy: "```").first)
            let expected = lines(block)
            #expect((3...6).contains(expected.count), "\(section): \(expected.count) lines")
            let compiled = lines(try #require(source.components(separatedBy: "enum \(type) {").dropFirst().first?.components(separatedBy: "\n}").first))
            let found = compiled.indices.contains { start in Array(compiled.dropFirst(start).prefix(expected.count)) == expected }
            #expect(found, "\(section): the README block differs from \(type) here")
        }
    }

    @Test func theExamplesBuildTheirClients() throws {
        let configuration = try AuthorizationConfiguration(projectToken: "p", baseURL: "https://api.rover.io", authorization: "Token k", advancedAuthEnabled: true)
        struct Provider: AuthorizationProvider {
            func credential(for context: AuthorizationContext) async throws -> Credential { .bearer("a.b.c") }
        }
        #expect(try SwiftLogExample.run(configuration: configuration, provider: Provider()).provider is Provider)
        #expect(try MetricsExample.run(configuration: configuration, provider: Provider()).provider is Provider)
        #expect(try TracingExample.run(configuration: configuration).provider is IDTokenStore)
    }
}
