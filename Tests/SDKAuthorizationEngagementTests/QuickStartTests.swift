import Foundation
import EngagementTestSupport
import Testing
import TestSupport
import SDKAuthorization
import SDKAuthorizationModeKit
import SDKAuthorizationEngagement

/// The Engagement quick start (the Engagement catalogue's "Bloomreach Engagement (Exponea)" article)
/// and the README's expiring-token example, verbatim inside namespaces, so they keep compiling; the
/// `...IsTheCodeCompiledHere` tests check that the article and the README still say the same. The README's first example is the Samples package's `QuickStart`, which the
/// demo runs against the reference backend; `quickStartInTheREADMEIsTheSamplesCode` checks it.
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

enum ExpiringToken {
    static func makeRefreshingAuthorizer(apiHost: String, refreshAccessToken: @escaping @Sendable () async throws -> String) throws -> RequestAuthorizer {
        let tokens = try RefreshingTokenProvider { try await refreshAccessToken() }   // expiry read from the JWT's exp
        return try RequestAuthorizer(
            policy: AuthorizationPolicy(rules: [AuthorizationRule(host: apiHost, scheme: .bearer)]),
            providers: [.bearer: tokens]
        )
    }
}

@Suite("README quick start", .hangLimit)
struct QuickStartTests {
    static let engagementArticle = "Sources/SDKAuthorizationEngagement/SDKAuthorizationEngagement.docc/EngagementMode.md"

    @Test func quickStartWithTheProviderPassedDirectly() throws {
        let client = try QuickStart.makeClient()
        #expect(client.provider is QuickStart.CustomerSessionProvider)
        #expect(client.policy.scheme(for: .appInboxFetch) == .bearer)
        #expect(client.policy.scheme(for: .trackEvents) == .apiKey)
    }

    @Test func quickStartWithTheProviderFoundByName() throws {
        let client = try QuickStartByName.makeClientByName()
        #expect(client.provider is CustomerTokenProvider)
        #expect(client.policy.scheme(for: .appInboxFetch) == .bearer)
    }

    @Test func engagementQuickStartInItsArticleIsTheCodeCompiledHere() throws {
        #expect(try readmeBlocksMatchCompiledCopy(heading: "## Overview", in: Self.engagementArticle, source: #filePath) == 2)
    }

    @Test func quickStartInTheREADMEIsTheSamplesCode() throws {
        let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Samples/Sources/AuthorizationSamples/QuickStart.swift").standardized
        #expect(try readmeBlocksMatchCompiledCopy(heading: "## Quick start", source: samples.path, importsMatch: true) == 2)
    }

    @Test func expiringTokenExampleInTheREADMEIsTheCodeCompiledHere() throws {
        #expect(try readmeBlocksMatchCompiledCopy(heading: "## A token that expires", source: #filePath) == 1)
    }

    @Test func expiringTokenExampleRefreshesOnceForConcurrentRequestsAndSendsOnlyToItsHost() async throws {
        let refreshes = Locked(0)
        let authorizer = try ExpiringToken.makeRefreshingAuthorizer(apiHost: "api.example.com") {
            refreshes.withLock { $0 += 1 }
            return "token-1"
        }
        let request = OutgoingRequest(method: "GET", url: URL(string: "https://api.example.com/v1/me")!)
        async let first = authorizer.authorize(request)
        async let second = authorizer.authorize(request)
        let headers = try await [first, second].map { $0.request.headers["Authorization"] }
        #expect(headers == ["Bearer token-1", "Bearer token-1"])
        #expect(refreshes.withLock { $0 } == 1)
        let elsewhere = try await authorizer.authorize(OutgoingRequest(method: "GET", url: URL(string: "https://other.example.com/")!))
        #expect(elsewhere.request.headers["Authorization"] == nil)
    }
}
