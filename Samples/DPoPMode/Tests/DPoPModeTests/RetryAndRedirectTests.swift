import DPoPMode
import Foundation
import SDKAuthorization
import SDKAuthorizationTesting
import Testing

/// What the mode needed from the core and found missing when it was first written outside the
/// framework; the core now gives both (`RejectionDecision.retryWithoutRefresh`,
/// `RequestAuthorizer.authorize(redirected:)`).
@Suite struct DPoPRetryAndRedirectTests {
    @Test func aNonceRetryIsNotCountedAsATokenRefresh() async throws {
        // A use_dpop_nonce retry keeps the token: nothing is refreshed, and the refresh window,
        // used up by the first token, does not refuse it.
        let fixture = try DPoPFixture(options: AuthorizationOptions(refreshWindow: AuthorizationOptions.RefreshWindow(maximumRefreshes: 1, interval: 600)))
        fixture.transport.enqueue(tokenAnswer("token-1"), challenge("use_dpop_nonce", nonce: "nonce-1"))
        try await fixture.get()
        #expect(fixture.tokenRequests.count == 1)
    }

    @Test func aRedirectedRequestCarriesAProofForItsNewURL() async throws {
        // A proof names its URL (htu) and is used once (jti): the second hop of a same-origin
        // redirect gets a proof of its own.
        let fixture = try DPoPFixture()
        fixture.transport.enqueue(tokenAnswer("token-1"), .response(ServerResponse(statusCode: 307, headers: ["Location": "https://api.example.com/moved"])))
        try await fixture.get("/items")
        let hops = try fixture.resourceRequests.map { try ReadProof(try #require($0.value(forHeader: "DPoP"))) }
        #expect(hops.count == 2)
        #expect(hops.last?.htu == "https://api.example.com/moved")
        #expect(hops.first?.jti != hops.last?.jti)
    }
}
