import Foundation
import Testing
import SDKAuthorization

/// The README's quick start, verbatim inside a namespace, so it keeps compiling.
enum QuickStart {
    // The app's provider, in the Exponea shape. It may block: it never runs on Swift's cooperative pool.
    final class ExampleAuthProvider: NSObject, AuthorizationProviderType {
        required override init() {}
        func getAuthorizationToken() -> String? { UserDefaults.standard.string(forKey: "customerJWT") }
    }

    static func makeClient() throws -> AuthorizedHTTPClient {
        let registry = ProviderRegistry()
        registry.register(ExampleAuthProvider.self, as: "ExponeaAuthProvider")   // stands in for @objc(ExponeaAuthProvider)
        let configuration = try AuthorizationConfiguration(
            projectToken: "YOUR PROJECT TOKEN",
            baseURL: "https://api.exponea.com",
            authorization: "Token YOUR API KEY",
            advancedAuthEnabled: true
        )
        return try AuthorizedHTTPClient(configuration: configuration, registry: registry)
    }

    static func fetchInbox(_ client: AuthorizedHTTPClient) async throws -> Data {
        try await client.send(.appInboxFetch, body: Data(#"{"customer_ids":{"registered":"user-42"}}"#.utf8)).body
    }
}

@Suite("README quick start")
struct QuickStartTests {
    @Test func quickStartConfiguresACustomerTokenClient() throws {
        let client = try QuickStart.makeClient()
        #expect(client.provider is CustomerTokenProvider)
        #expect(client.policy.scheme(for: .appInboxFetch) == .bearer)
        #expect(client.policy.scheme(for: .trackEvents) == .apiKey)
        #expect(client.configuration?.authorization?.description == "Token Authorization (token redacted)")
    }
}
