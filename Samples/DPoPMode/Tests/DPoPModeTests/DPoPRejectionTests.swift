import DPoPMode
import Foundation
import SDKAuthorization
import SDKAuthorizationModeKit
import SDKAuthorizationTesting
import Testing

@Suite struct DPoPRejectionTests {
    @Test func aResourceNonceChallengeIsRetriedOnceWithTheNonceInANewProof() async throws {
        let fixture = try DPoPFixture()
        fixture.transport.enqueue(tokenAnswer("token-1"), challenge("use_dpop_nonce", nonce: "nonce-R1"))
        try await fixture.get()
        let sent = fixture.resourceRequests
        #expect(sent.count == 2)
        let first = try ReadProof(try #require(sent[0].value(forHeader: "DPoP")))
        let retry = try ReadProof(try #require(sent[1].value(forHeader: "DPoP")))
        #expect(first.nonce == nil)
        #expect(retry.nonce == "nonce-R1")
        #expect(retry.jti != first.jti)
        #expect(retry.signatureIsValid && retry.ath == expectedATH("token-1"))
        #expect(sent[1].value(forHeader: "Authorization") == "DPoP token-1")
        #expect(fixture.tokenRequests.count == 1)
        // The nonce stays for the next request to that origin.
        try await fixture.get()
        #expect(try ReadProof(try #require(fixture.resourceRequests.last?.value(forHeader: "DPoP"))).nonce == "nonce-R1")
    }

    @Test func aNonceChallengeFailsWhenNonceRetryIsOff() async throws {
        let fixture = try DPoPFixture(nonceRetry: false)
        fixture.transport.enqueue(tokenAnswer("token-1"), challenge("use_dpop_nonce", nonce: "nonce-R1"))
        do {
            try await fixture.get()
            Issue.record("sent")
        } catch {
            #expect(error.code == .authorizationRejected)
        }
        #expect(fixture.resourceRequests.count == 1)
    }

    @Test func aNonceChallengeWithoutAUsableNonceFails() async throws {
        let fixture = try DPoPFixture()
        fixture.transport.enqueue(tokenAnswer("token-1"), challenge("use_dpop_nonce", nonce: "bad nonce"))
        await #expect(throws: RequestError.self) { try await fixture.get() }
        #expect(fixture.resourceRequests.count == 1)
    }

    @Test func anInvalidTokenAnswerFetchesOneNewTokenAndRetries() async throws {
        let fixture = try DPoPFixture()
        fixture.transport.enqueue(tokenAnswer("token-old"), challenge("invalid_token"))
        try await fixture.get()
        #expect(fixture.tokenRequests.count == 2)
        #expect(fixture.resourceRequests.map { $0.value(forHeader: "Authorization") } == ["DPoP token-old", "DPoP token-1"])
        let retry = try ReadProof(try #require(fixture.resourceRequests.last?.value(forHeader: "DPoP")))
        #expect(retry.ath == expectedATH("token-1"))
    }

    @Test func fiftyRequestsRejectedWithOneInvalidTokenCauseOneNewToken() async throws {
        let fixture = try DPoPFixture()
        try await fixture.get()
        fixture.revoke("token-1")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<50 { group.addTask { try await fixture.get() } }
            try await group.waitForAll()
        }
        #expect(fixture.tokenRequests.count == 2)
        #expect(fixture.resourceRequests.filter { $0.value(forHeader: "Authorization") == "DPoP token-2" }.count == 50)
    }

    @Test func anInvalidDPoPProofAnswerFailsWithoutRetry() async throws {
        let fixture = try DPoPFixture()
        fixture.transport.enqueue(tokenAnswer("token-1"), challenge("invalid_dpop_proof"))
        do {
            try await fixture.get()
            Issue.record("sent")
        } catch {
            #expect(error.code == .authorizationRejected)
            fixture.expectNoSecret(in: [error.description, String(reflecting: error)])
        }
        #expect(fixture.resourceRequests.count == 1)
        #expect(fixture.tokenRequests.count == 1)
        #expect(fixture.sink.diagnostics.contains { $0.message.contains("'invalid_dpop_proof'") })
        fixture.expectNoSecret(in: fixture.sink.diagnostics.map(\.message))
    }

    @Test func aRejectedRetryFailsTheRequest() async throws {
        let fixture = try DPoPFixture()
        fixture.transport.enqueue(tokenAnswer("token-1"), challenge("use_dpop_nonce", nonce: "nonce-1"), challenge("use_dpop_nonce", nonce: "nonce-2"))
        do {
            try await fixture.get()
            Issue.record("sent")
        } catch {
            #expect(error.code == .authorizationRejected)
        }
        #expect(fixture.resourceRequests.count == 2)
    }

    @Test func aForbiddenAnswerIsNotRetried() async throws {
        let fixture = try DPoPFixture()
        fixture.transport.enqueue(tokenAnswer("token-1"),
                                  .response(ServerResponse(statusCode: 403, headers: ["WWW-Authenticate": #"DPoP error="invalid_token""#])))
        await #expect(throws: RequestError.self) { try await fixture.get() }
        #expect(fixture.resourceRequests.count == 1)
    }

    @Test func aNonceOnASuccessfulAnswerGoesInTheNextProof() async throws {
        let fixture = try DPoPFixture()
        #expect(fixture.provider.inspectsAcceptedResponses)
        fixture.transport.enqueue(tokenAnswer("token-1"), .response(ServerResponse(statusCode: 200, headers: ["DPoP-Nonce": "nonce-S1"])))
        try await fixture.get()
        try await fixture.get()
        let proofs = try fixture.resourceRequests.map { try ReadProof(try #require($0.value(forHeader: "DPoP"))) }
        #expect(proofs.map(\.nonce) == [nil, "nonce-S1"])
        // A nonce of one origin is not sent to another: the token endpoint never gave one.
        fixture.clock.advance(by: 600)
        try await fixture.get()
        #expect(try ReadProof(try #require(fixture.tokenRequests.last?.value(forHeader: "DPoP"))).nonce == nil)
    }

    @Test(arguments: ["has space", "tab\there", "", String(repeating: "n", count: 513), "caf\u{E9}", "line\r\nX-Injected: 1"])
    func aNonceThatIsNotBoundedVisibleASCIIIsIgnored(nonce: String) async throws {
        let fixture = try DPoPFixture()
        fixture.transport.enqueue(tokenAnswer("token-1"), .response(ServerResponse(statusCode: 200, headers: ["DPoP-Nonce": "nonce-good"])),
                                  .response(ServerResponse(statusCode: 200, headers: ["DPoP-Nonce": nonce])))
        for _ in 0..<3 { try await fixture.get() }
        #expect(try ReadProof(try #require(fixture.resourceRequests.last?.value(forHeader: "DPoP"))).nonce == "nonce-good")
    }

    @Test func aNonceOf512VisibleCharactersIsUsed() async throws {
        let fixture = try DPoPFixture()
        let nonce = String(repeating: "\"\\n", count: 170) + "ab"
        fixture.transport.enqueue(tokenAnswer("token-1"), .response(ServerResponse(statusCode: 200, headers: ["DPoP-Nonce": nonce])))
        try await fixture.get()
        try await fixture.get()
        #expect(try ReadProof(try #require(fixture.resourceRequests.last?.value(forHeader: "DPoP"))).nonce == nonce)
    }

    /// Behind an app's decorator too (one that forwards only the two calls it must): the provider
    /// notes on the request the generation it issued the token in, whatever wraps it.
    @Test(arguments: [false, true])
    func aLogoutDropsTheTokenAndARequestRejectedAfterItFailsAsCleared(behindADecorator: Bool) async throws {
        let fixture = try DPoPFixture()
        try await fixture.get()
        let (arrivals, arrived) = AsyncStream.makeStream(of: Void.self)
        let (releases, release) = AsyncStream.makeStream(of: Void.self)
        let gated = RecordingTransport.Answer.response(ServerResponse(statusCode: 401, headers: ["WWW-Authenticate": #"DPoP error="invalid_token""#]))
        // The server holds the next resource request until the test lets it answer.
        let gate = GatedTransport(inner: fixture.transport, arrived: arrived, releases: releases)
        let policy = AuthorizationPolicy(rules: [try AuthorizationRule(host: "api.example.com", scheme: .bearer)])
        let installed: any AuthorizationProvider = behindADecorator ? ForwardingDecorator(fixture.provider) : fixture.provider
        let client = AuthorizedHTTPClient(authorizer: try RequestAuthorizer(policy: policy, providers: [.bearer: installed], clock: fixture.clock,
                                                                            diagnostics: fixture.sink), transport: gate)
        fixture.transport.enqueue(gated)
        let request = Task { try await client.send(OutgoingRequest(method: "GET", url: URL(string: "https://api.example.com/items")!)) }
        var waiting = arrivals.makeAsyncIterator()
        await waiting.next()
        fixture.provider.clearToken()
        release.yield()
        do {
            _ = try await request.value
            Issue.record("sent")
        } catch let error as RequestError {
            #expect(error.code == .credentialCleared)
        }
        #expect(fixture.tokenRequests.count == 1)
        // The next request fetches a token for the new session.
        try await fixture.get()
        #expect(fixture.tokenRequests.count == 2)
        #expect(fixture.resourceRequests.last?.value(forHeader: "Authorization") == "DPoP token-2")
    }

    @Test func anIdentityChangeDropsTheToken() async throws {
        let fixture = try DPoPFixture()
        try await fixture.get()
        try await fixture.client.identityDidChange()
        try await fixture.get()
        #expect(fixture.tokenRequests.count == 2)
    }
}

/// Passes requests to `inner`, holding each one to `api.example.com` until `releases` yields.
final class GatedTransport: HTTPTransport {
    let inner: RecordingTransport
    let arrived: AsyncStream<Void>.Continuation
    let releases: AsyncStream<Void>

    init(inner: RecordingTransport, arrived: AsyncStream<Void>.Continuation, releases: AsyncStream<Void>) {
        self.inner = inner
        self.arrived = arrived
        self.releases = releases
    }

    /// Whether the next resource request is still to be held: only the first is, so a broken build
    /// that sends the request again fails the test instead of hanging it.
    private let holdsNext = Locked(true)

    func send(_ request: OutgoingRequest) async throws -> ServerResponse {
        if request.url.host == "api.example.com", holdsNext.withLock({ holds in defer { holds = false }; return holds }) {
            arrived.yield()
            for await _ in releases { break }
        }
        return try await inner.send(request)
    }
}

/// An app's decorator (metrics, logging) written the naive way: it forwards only the calls it must.
struct ForwardingDecorator: AuthorizationProvider {
    let inner: any AuthorizationProvider
    init(_ inner: any AuthorizationProvider) { self.inner = inner }

    func credential(for context: AuthorizationContext) async throws -> Credential {
        try await inner.credential(for: context)
    }

    func credentialRejected(_ credential: Credential, response: ServerResponse, context: AuthorizationContext) async -> RejectionDecision {
        await inner.credentialRejected(credential, response: response, context: context)
    }
}
