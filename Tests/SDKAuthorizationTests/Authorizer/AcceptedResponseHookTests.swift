import Foundation
import SDKAuthorizationTesting
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationModeKit

/// A provider that records every accepted answer it is shown, and says whether it wants them.
final class AcceptedAnswerRecordingProvider: AuthorizationProvider, Sendable {
    let inspectsAcceptedResponses: Bool
    let credential: Credential
    let seen = Locked<[(status: Int, body: String, credential: String?)]>([])

    init(inspects: Bool, credential: Credential = .bearer("token-1")) {
        inspectsAcceptedResponses = inspects
        self.credential = credential
    }

    func credential(for context: AuthorizationContext) async throws -> Credential { credential }

    func credentialAccepted(_ credential: Credential, response: ServerResponse, context: AuthorizationContext) async {
        seen.withLock { $0.append((response.statusCode, String(decoding: response.body, as: UTF8.self), credential.value)) }
    }

    var endsByDeadline: Bool { true }
}

@Suite("The core's hook for accepted answers (AuthorizationProvider.credentialAccepted)", .hangLimit)
struct AcceptedResponseHookTests {
    let url = URL(string: "https://api.example.com/v1/items")!

    func authorizer(_ provider: any AuthorizationProvider) throws -> RequestAuthorizer {
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(host: "api.example.com", scheme: .bearer))
        return try RequestAuthorizer(policy: policy, providers: [.bearer: provider], diagnostics: RecordingDiagnosticsSink())
    }

    @Test func aProviderThatInspectsAcceptedAnswersSeesTheFinalAnswerToItsCredentialOnceWithItsBody() async throws {
        let provider = AcceptedAnswerRecordingProvider(inspects: true)
        let client = AuthorizedHTTPClient(authorizer: try authorizer(provider), transport: RecordingTransport(statusCode: 201, body: #"{"ok":1}"#))
        _ = try await client.send(OutgoingRequest(method: "GET", url: url))
        let seen = provider.seen.withLock { $0 }
        #expect(seen.count == 1)
        #expect(seen.first?.status == 201 && seen.first?.body == #"{"ok":1}"# && seen.first?.credential == "token-1")
    }

    @Test func aProviderThatDoesNotInspectAcceptedAnswersIsNeverShownOne() async throws {
        let provider = AcceptedAnswerRecordingProvider(inspects: false)
        let authorizer = try authorizer(provider)
        #expect(!authorizer.inspectsAcceptedResponses)
        _ = try await AuthorizedHTTPClient(authorizer: authorizer, transport: RecordingTransport(statusCode: 200)).send(OutgoingRequest(method: "GET", url: url))
        let authorized = try await authorizer.authorize(OutgoingRequest(method: "GET", url: url))
        #expect(await authorizer.evaluate(ServerResponse(statusCode: 200), to: authorized) == .accept)
        #expect(provider.seen.withLock { $0.isEmpty })
    }

    @Test func theAuthorizerSaysWhetherAnInstalledProviderInspectsAcceptedAnswersAndFollowsSetProvider() async throws {
        let authorizer = try authorizer(AcceptedAnswerRecordingProvider(inspects: false))
        #expect(!authorizer.inspectsAcceptedResponses)
        authorizer.setProvider(AcceptedAnswerRecordingProvider(inspects: true), for: .bearer)
        #expect(authorizer.inspectsAcceptedResponses)
        authorizer.setProvider(AcceptedAnswerRecordingProvider(inspects: false), for: .bearer)
        #expect(!authorizer.inspectsAcceptedResponses)
    }

    @Test func aRejectionGoesToCredentialRejectedNotToTheAcceptedHook() async throws {
        let provider = AcceptedAnswerRecordingProvider(inspects: true)
        let client = AuthorizedHTTPClient(authorizer: try authorizer(provider), transport: RecordingTransport(statusCode: 401))
        await #expect(throws: RequestError.self) { _ = try await client.send(OutgoingRequest(method: "GET", url: url)) }
        #expect(provider.seen.withLock { $0.isEmpty })
    }

    @Test func theStepByStepEvaluateShowsAnAcceptedAnswerButNotARedirectItIsStillToFollow() async throws {
        let provider = AcceptedAnswerRecordingProvider(inspects: true)
        let authorizer = try authorizer(provider)
        let authorized = try await authorizer.authorize(OutgoingRequest(method: "GET", url: url))
        #expect(await authorizer.evaluate(ServerResponse(statusCode: 302, headers: ["Location": "/v1/other"]), to: authorized) == .accept)
        #expect(provider.seen.withLock { $0.isEmpty })
        #expect(await authorizer.evaluate(ServerResponse(statusCode: 204), to: authorized) == .accept)
        #expect(provider.seen.withLock { $0.map { $0.status } } == [204])
    }

    @Test func anAnswerFromAnotherOriginAfterARedirectDroppedTheCredentialIsNeverShown() async throws {
        let provider = AcceptedAnswerRecordingProvider(inspects: true)
        let transport = RecordingTransport { request in
            request.url.host == "api.example.com"
                ? ServerResponse(statusCode: 302, headers: ["Location": "https://elsewhere.example.net/x"])
                : ServerResponse(statusCode: 200, body: Data(#"{"auth_error":{"error_code":22}}"#.utf8))
        }
        _ = try await AuthorizedHTTPClient(authorizer: try authorizer(provider), transport: transport).send(OutgoingRequest(method: "GET", url: url))
        #expect(transport.requests.count == 2, "the redirect was followed")
        #expect(provider.seen.withLock { $0.isEmpty })
    }

    @Test func aCachingProviderPassesAcceptedAnswersOnToTheProviderItWraps() async throws {
        let inner = AcceptedAnswerRecordingProvider(inspects: true)
        let cache = CachingAuthorizationProvider(wrapping: inner)
        #expect(cache.inspectsAcceptedResponses)
        #expect(!CachingAuthorizationProvider(wrapping: AcceptedAnswerRecordingProvider(inspects: false)).inspectsAcceptedResponses)
        _ = try await AuthorizedHTTPClient(authorizer: try authorizer(cache), transport: RecordingTransport(statusCode: 200)).send(OutgoingRequest(method: "GET", url: url))
        #expect(inner.seen.withLock { $0.map { $0.status } } == [200])
    }

    @Test func aRequestSentWithoutACredentialBecauseTheProviderOmittedItHasItsAnswerShown() async throws {
        let provider = AcceptedAnswerRecordingProvider(inspects: true, credential: .omitted)
        _ = try await AuthorizedHTTPClient(authorizer: try authorizer(provider), transport: RecordingTransport(statusCode: 201)).send(OutgoingRequest(method: "GET", url: url))
        #expect(provider.seen.withLock { $0.map { $0.status } } == [201])
        #expect(provider.seen.withLock { $0.first?.credential } == .some(nil))
    }
}
