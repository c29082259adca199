import Foundation
import Testing
import SDKAuthorization
import SDKAuthorizationEngagement

/// The README's quick start, verbatim inside namespaces, so it keeps compiling;
/// `quickStartInTheREADMEIsTheCodeCompiledHere` checks that the README still says the same.
enum QuickStart {
    // The app's provider: asked for every request that needs the customer's token.
    struct CustomerSessionProvider: AuthorizationProvider {
        func credential(for context: AuthorizationContext) async throws -> Credential {
            .bearer(UserDefaults.standard.string(forKey: "customerJWT") ?? "")   // empty: the request fails locally
        }
    }

    static func makeClient() throws -> AuthorizedHTTPClient {
        let configuration = try AuthorizationConfiguration(
            projectToken: "YOUR_PROJECT_TOKEN",
            baseURL: "https://api.exponea.com",
            authorization: "Token YOUR_API_KEY",
            advancedAuthEnabled: true
        )
        return try AuthorizedHTTPClient(configuration: configuration, provider: CustomerSessionProvider())
    }

    static func fetchInbox(_ client: AuthorizedHTTPClient) async throws -> Data {
        try await client.send(.appInboxFetch, body: Data(#"{"customer_ids":{"registered":"user-42"}}"#.utf8)).body
    }
}

enum QuickStartByName {
    // The app's provider, in the Exponea shape. It may block: it never runs on Swift's cooperative pool.
    final class ExampleAuthProvider: NSObject, AuthorizationProviderType {
        required override init() {}
        func getAuthorizationToken() -> String? { UserDefaults.standard.string(forKey: "customerJWT") }
    }

    static func makeClientByName() throws -> AuthorizedHTTPClient {
        let registry = ProviderRegistry()
        registry.register(ExampleAuthProvider.self, as: "ExponeaAuthProvider")   // stands in for @objc(ExponeaAuthProvider)
        let configuration = try AuthorizationConfiguration(
            projectToken: "YOUR_PROJECT_TOKEN",
            baseURL: "https://api.exponea.com",
            authorization: "Token YOUR_API_KEY",
            advancedAuthEnabled: true
        )
        return try AuthorizedHTTPClient(configuration: configuration, registry: registry)
    }
}

@Suite("README quick start")
struct QuickStartTests {
    @Test func quickStartWithTheProviderPassedDirectly() throws {
        let client = try QuickStart.makeClient()
        #expect(client.provider is QuickStart.CustomerSessionProvider)
        #expect(client.policy.scheme(for: .appInboxFetch) == .bearer)
        #expect(client.policy.scheme(for: .trackEvents) == .apiKey)
        #expect(client.configuration?.authorization?.description == "Token Authorization (token redacted)")
    }

    @Test func quickStartWithTheProviderFoundByName() throws {
        let client = try QuickStartByName.makeClientByName()
        #expect(client.provider is CustomerTokenProvider)
        #expect(client.policy.scheme(for: .appInboxFetch) == .bearer)
    }

    @Test func quickStartInTheREADMEIsTheCodeCompiledHere() throws {
        #expect(try readmeBlocksMatchCompiledCopy(heading: "## Quick start", source: #filePath) == 2)
    }
}
