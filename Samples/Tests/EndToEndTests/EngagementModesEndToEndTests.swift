import AuthorizationSamples
import Foundation
import ReferenceBackend
import SDKAuthorization
import SDKAuthorizationEngagement
import SDKAuthorizationTesting
import Testing

/// Token and customer-token modes over real HTTP against the reference backend, which verifies
/// real RS256 JWTs. Serialized: the customer-token tests share one provider class.
@Suite("Token and customer-token modes end to end", .serialized, .timeLimit(.minutes(3)))
struct EngagementModesEndToEndTests {
    @Test func tokenModeIsAcceptedOnAllNineEndpointsWithTheExactHeader() async throws {
        try await withEnvironment { environment, backend in
            let client = try AuthorizedHTTPClient(configuration: environment.configuration())
            for endpoint in AuthorizationPolicy.engagement(advancedAuthEnabled: false).endpoints {
                let response = try await client.send(endpoint.id, body: customerBody("user-1"))
                #expect(response.statusCode == 200, "\(endpoint.id)")
                #expect(String(decoding: response.body, as: UTF8.self).contains(#""scheme":"Token""#))
            }
            let records = await backend.records()
            #expect(records.count == 9)
            #expect(records.allSatisfy { $0.authorization == "Token \(environment.apiKey)" })
            let paths = Set(records.map { $0.path + ($0.query.map { "?\($0)" } ?? "") })
            #expect(paths == Set(EngagementEndpoint.allCases.map { $0.path(projectToken: environment.projectToken) }))
        }
    }

    @Test func wrongAPIKeyIsRejectedAsATypedAuthorizationFailure() async throws {
        try await withEnvironment { environment, _ in
            let configuration = try AuthorizationConfiguration(
                projectToken: environment.projectToken, baseURL: environment.baseURL.absoluteString, authorization: "Token not-the-key"
            )
            let client = try AuthorizedHTTPClient(configuration: configuration)
            let result = await outcome(client, .trackEvents, body: customerBody("u"))
            guard case .failure(let error) = result, let rejected = rejection(error) else {
                Issue.record("expected a rejection, got \(result)")
                return
            }
            #expect(rejected.status == 401)
            #expect(rejected.scheme == .apiKey)
            #expect(rejected.code == "invalid_api_key")
        }
    }

    @Test func customerTokenFromTheAppServerIsAcceptedOnTheInboxEndpoints() async throws {
        try await withEnvironment(bearerRequired: [.appInboxFetch, .appInboxMarkAsRead]) { environment, backend in
            let token = try await AppServer.login(baseURL: environment.baseURL, userId: "user-42")
            SettableAuthProvider.token.value = token
            let registry = ProviderRegistry()
            registry.register(SettableAuthProvider.self, as: "ExponeaAuthProvider")
            let client = try AuthorizedHTTPClient(configuration: environment.configuration(advancedAuthEnabled: true), registry: registry)

            let fetch = try await client.send(.appInboxFetch, body: customerBody("user-42"))
            let read = try await client.send(.appInboxMarkAsRead, body: customerBody("user-42"))
            _ = try await client.send(.trackEvents, body: customerBody("user-42"))
            for response in [fetch, read] {
                #expect(String(decoding: response.body, as: UTF8.self).contains(#""subject":"user-42""#))
            }
            let headers = await backend.records().map(\.authorization)
            #expect(headers == ["Bearer \(token)", "Bearer \(token)", "Token \(environment.apiKey)"])
        }
    }

    @Test(arguments: [
        ("expired", 401, "token_expired"),
        ("wrongKey", 401, "invalid_signature"),
        ("otherSubject", 403, "subject_mismatch"),
        ("wrongAlgorithm", 401, "unsupported_algorithm"),
        ("missingExp", 401, "missing_exp"),
    ])
    func badCustomerTokensAreRejectedByTheServerAndSurfacedAsTypedErrors(variant: String, status: Int, code: String) async throws {
        try await withEnvironment { environment, _ in
            SettableAuthProvider.token.value = try await AppServer.login(baseURL: environment.baseURL, userId: "user-42", variant: variant)
            let registry = ProviderRegistry()
            registry.register(SettableAuthProvider.self, as: "ExponeaAuthProvider")
            let client = try AuthorizedHTTPClient(configuration: environment.configuration(advancedAuthEnabled: true), registry: registry)
            let result = await outcome(client, .appInboxFetch, body: customerBody("user-42"))
            guard case .failure(let error) = result, let rejected = rejection(error) else {
                Issue.record("expected a rejection, got \(result)")
                return
            }
            #expect(rejected.status == status)
            #expect(rejected.scheme == .bearer)
            #expect(rejected.code == code)
        }
    }

    @Test func tokensOfARotatedOutKeyFailOnlyAfterTheThirdRotation() async throws {
        try await withEnvironment { environment, backend in
            SettableAuthProvider.token.value = try await AppServer.login(baseURL: environment.baseURL, userId: "user-42")
            let registry = ProviderRegistry()
            registry.register(SettableAuthProvider.self, as: "ExponeaAuthProvider")
            let client = try AuthorizedHTTPClient(configuration: environment.configuration(advancedAuthEnabled: true), registry: registry)
            try await backend.rotateSigningKey()
            try await backend.rotateSigningKey()
            #expect(try await client.send(.appInboxFetch, body: customerBody("user-42")).statusCode == 200)
            try await backend.rotateSigningKey()
            let result = await outcome(client, .appInboxFetch, body: customerBody("user-42"))
            guard case .failure(let error) = result else { Issue.record("accepted a dropped key"); return }
            #expect(rejection(error)?.code == "invalid_signature")
        }
    }

    @Test func providerWithoutATokenSendsNothingToTheServer() async throws {
        try await withEnvironment { environment, backend in
            SettableAuthProvider.token.value = nil
            let registry = ProviderRegistry()
            registry.register(SettableAuthProvider.self, as: "ExponeaAuthProvider")
            let client = try AuthorizedHTTPClient(configuration: environment.configuration(advancedAuthEnabled: true), registry: registry)
            let result = await outcome(client, .appInboxFetch, body: customerBody("user-42"))
            guard case .failure(.missingCustomerToken(endpoint: .appInboxFetch)) = result else {
                Issue.record("expected missingCustomerToken, got \(result)")
                return
            }
            #expect(await backend.records().isEmpty)
        }
    }

    @Test func apiKeyOnAnEndpointTheServerReservesForCustomerTokensIsForbidden() async throws {
        try await withEnvironment(bearerRequired: [.appInboxFetch]) { environment, _ in
            let client = try AuthorizedHTTPClient(configuration: environment.configuration())
            let result = await outcome(client, .appInboxFetch, body: customerBody("user-42"))
            guard case .failure(let error) = result, let rejected = rejection(error) else {
                Issue.record("expected a rejection, got \(result)")
                return
            }
            #expect(rejected.status == 403)
            #expect(rejected.code == "bearer_required")
        }
    }

    @Test func crossOriginRedirectOverRealHTTPArrivesWithoutTheAuthorizationHeader() async throws {
        try await withEnvironment { environment, backend in
            let other = try await ReferenceBackend.start(.init(apiKeys: [environment.apiKey], projectToken: environment.projectToken))
            defer { Task { await other.stop() } }
            let target = other.baseURL.absoluteString + EngagementEndpoint.trackEvents.path(projectToken: environment.projectToken)
            let sameOrigin = environment.baseURL.absoluteString + EngagementEndpoint.trackEvents.path(projectToken: environment.projectToken)
            func hop(_ url: String) -> String {
                "/__redirect?status=307&to=" + (url.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
            }
            var policy = AuthorizationPolicy.engagement(advancedAuthEnabled: false)
            try policy.add(Endpoint("leave", path: hop(target)), scheme: .apiKey)
            try policy.add(Endpoint("stay", path: hop(sameOrigin)), scheme: .apiKey)
            let client = try AuthorizedHTTPClient(configuration: environment.configuration(), policy: policy)

            // A 307 would take the body to the other origin: not followed, nothing reaches the other host.
            let refused = await outcome(client, "leave", body: customerBody("u"))
            guard case .failure(let refusal) = refused else { Issue.record("a body was forwarded to another origin"); return }
            #expect(refusal.code == .redirectRefused)
            #expect(await other.records().isEmpty)

            // Without a body the hop is followed, and the other host sees no credential.
            let left = await outcome(client, "leave")
            guard case .failure(let error) = left else { Issue.record("the other host accepted a request without credentials"); return }
            #expect(rejection(error)?.code == "missing_authorization")
            #expect(await other.records().map(\.authorization) == [nil])

            #expect(try await client.send("stay", body: customerBody("u")).statusCode == 200)
            #expect(await backend.records().map(\.authorization) == Array(repeating: "Token \(environment.apiKey)", count: 4))
        }
    }
}
