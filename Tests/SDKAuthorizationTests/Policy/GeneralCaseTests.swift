import Foundation
import SDKAuthorization
import SDKAuthorizationTesting
import Testing
import TestSupport

/// The general case the README leads with: your own API, rules alone, your own header.
@Suite("Your own API: rules and your own API-key header", .hangLimit)
struct GeneralCaseTests {
    private func authorizer(_ rules: [AuthorizationRule], _ providers: [AuthorizationScheme: any AuthorizationProvider]) throws -> RequestAuthorizer {
        try RequestAuthorizer(policy: AuthorizationPolicy(rules: rules), providers: providers, diagnostics: RecordingDiagnosticsSink())
    }

    private func get(_ url: String) -> OutgoingRequest {
        OutgoingRequest(method: "GET", url: URL(string: url)!)
    }

    @Test func apiKeyUnderTheAuthorsHeaderIsSentAsItIsOnlyToTheRulesHost() async throws {
        let authorizer = try authorizer([try AuthorizationRule(host: "api.example.com", scheme: .apiKey)],
                                        [.apiKey: ScriptedProvider(.credential(.apiKey("key-123", header: "X-API-Key")))])
        let ours = try await authorizer.authorize(get("https://api.example.com/v1/items"))
        #expect(ours.request.headers["X-API-Key"] == "key-123")
        #expect(ours.request.headers["Authorization"] == nil)
        let elsewhere = try await authorizer.authorize(get("https://cdn.example.com/v1/items"))
        #expect(elsewhere.request.headers.isEmpty)
        #expect(!elsewhere.carriesCredential)
    }

    @Test func apiKeyUnderAHeaderTheTransportOwnsFailsTheRequestLocally() async throws {
        let authorizer = try authorizer([try AuthorizationRule(host: "api.example.com", scheme: .apiKey)],
                                        [.apiKey: ScriptedProvider(.credential(.apiKey("key-123", header: "Cookie")))])
        await #expect(throws: RequestError.invalidCredential(endpoint: nil)) {
            _ = try await authorizer.authorize(get("https://api.example.com/v1/items"))
        }
    }

    @Test func apiKeyWithItsOwnHeaderNamesTheHeaderButNeverTheKeyInItsDescriptions() {
        let credential = Credential.apiKey("key-123", header: "X-API-Key")
        #expect(credential.headerName == "X-API-Key")
        #expect(credential.value == "key-123")
        var dumped = ""
        dump(credential, to: &dumped)
        for text in [credential.description, credential.debugDescription, String(reflecting: credential), dumped] {
            #expect(!text.contains("key-123"), "\(text)")
        }
        #expect(credential != Credential.authorization(scheme: "Token", "key-123"))
    }

    @Test func policyMadeOfRulesGivesEachRequestTheSchemeOfTheFirstRuleThatMatches() async throws {
        let authorizer = try authorizer(
            [try AuthorizationRule(host: "api.example.com", path: "/public/**", scheme: .none),
             try AuthorizationRule(host: "api.example.com", scheme: .bearer)],
            [.bearer: ScriptedProvider(.credential(.bearer("token-1")))]
        )
        #expect(authorizer.policy.rules.count == 2)
        #expect(try await authorizer.authorize(get("https://api.example.com/public/logo.png")).request.headers["Authorization"] == nil)
        #expect(try await authorizer.authorize(get("https://api.example.com/v1/me")).request.headers["Authorization"] == "Bearer token-1")
    }

    @Test func policyOfRulesNamingASchemeWithoutAProviderFailsNamingTheRule() throws {
        let error = #expect(throws: ConfigurationError.self) {
            _ = try authorizer([try AuthorizationRule(host: "api.example.com", scheme: .apiKey)], [:])
        }
        #expect(error?.message.contains("api.example.com") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("apiKey") == true, "\(error?.message ?? "")")
    }
}
