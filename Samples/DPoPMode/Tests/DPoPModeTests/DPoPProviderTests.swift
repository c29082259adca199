import Crypto
import DPoPMode
import Foundation
import SDKAuthorization
import SDKAuthorizationModeKit
import SDKAuthorizationTesting
import Testing

@Suite struct DPoPProofTests {
    @Test func aResourceProofsHeaderClaimsAndSignatureVerifyWithTheSignersPublicKey() async throws {
        let fixture = try DPoPFixture()
        try await fixture.get("/items/7?page=2&secret=s1#top")
        let request = try #require(fixture.resourceRequests.first)
        #expect(request.value(forHeader: "Authorization") == "DPoP token-1")
        let proof = try ReadProof(try #require(request.value(forHeader: "DPoP")))
        #expect(proof.signatureIsValid)
        #expect(proof.jwk == fixture.signer.publicKey.rawRepresentation)
        #expect(proof.header["typ"] as? String == "dpop+jwt")
        #expect(proof.header["alg"] as? String == "ES256")
        #expect(proof.htm == "GET")
        #expect(proof.htu == "https://api.example.com/items/7")
        #expect(proof.ath == expectedATH("token-1"))
        #expect(proof.iat == Int(fixture.clock.now().timeIntervalSince1970))
        #expect(proof.nonce == nil)
        #expect((proof.jti?.count ?? 0) >= 16)
    }

    @Test func theTokenRequestCarriesAProofForPostAtTheTokenURLWithoutATokenHash() async throws {
        let fixture = try DPoPFixture()
        try await fixture.get()
        let request = try #require(fixture.tokenRequests.first)
        #expect(request.method == "POST")
        #expect(request.value(forHeader: "Content-Type") == "application/x-www-form-urlencoded")
        #expect(String(decoding: request.body ?? Data(), as: UTF8.self) == "grant_type=client_credentials&client_id=client-1")
        #expect(request.value(forHeader: "Authorization") == nil)
        let proof = try ReadProof(try #require(request.value(forHeader: "DPoP")))
        #expect(proof.signatureIsValid)
        #expect(proof.jwk == fixture.signer.publicKey.rawRepresentation)
        #expect(proof.htm == "POST")
        #expect(proof.htu == tokenURL.absoluteString)
        #expect(proof.ath == nil)
    }

    @Test func everyRequestGetsAFreshProofWithItsOwnJTI() async throws {
        let fixture = try DPoPFixture()
        for _ in 0..<3 { try await fixture.get() }
        let proofs = try fixture.transport.requests.map { try ReadProof(try #require($0.value(forHeader: "DPoP"))) }
        #expect(proofs.count == 4)
        #expect(Set(proofs.compactMap(\.jti)).count == 4)
        #expect(proofs.allSatisfy { $0.signatureIsValid })
    }

    @Test func aProofSignedWithAnotherKeyDoesNotVerifyWithTheSignersKey() async throws {
        // The check of the tests themselves: a signature over other bytes, or by another key, fails.
        let fixture = try DPoPFixture()
        try await fixture.get()
        let proof = try #require(fixture.resourceRequests.first?.value(forHeader: "DPoP"))
        var parts = proof.split(separator: ".").map(String.init)
        parts[1] = base64URL(Data(#"{"htm":"DELETE"}"#.utf8))
        #expect(try !ReadProof(parts.joined(separator: ".")).signatureIsValid)
        #expect(try ReadProof(proof).jwk != P256DPoPSigner().publicKey.rawRepresentation)
    }

    @Test func aSignerThatReturnsNoRawSignatureFailsTheRequestUnsent() async throws {
        struct DERSigner: DPoPSigner {
            let key = P256.Signing.PrivateKey()
            var publicKey: P256.Signing.PublicKey { key.publicKey }
            func sign(_ signingInput: Data) async throws -> Data { try key.signature(for: signingInput).derRepresentation }
        }
        let fixture = try DPoPFixture(signer: DERSigner())
        await #expect(throws: RequestError.self) { try await fixture.get() }
        do { try await fixture.get() } catch { #expect(error.code == .dpopSigningFailed) }
        #expect(fixture.transport.requests.isEmpty)
    }

    @Test func aSignerThatNeverAnswersFailsTheRequestAtItsDeadline() async throws {
        /// Never answers, and ignores cancellation: its continuation is kept, never resumed.
        final class HangingSigner: DPoPSigner {
            let publicKey = P256DPoPSigner().publicKey
            let pending = Locked<[CheckedContinuation<Data, Never>]>([])
            func sign(_ signingInput: Data) async throws -> Data {
                await withCheckedContinuation { continuation in pending.withLock { $0.append(continuation) } }
            }
        }
        let signer = HangingSigner()
        defer { signer.pending.withLock { $0.forEach { $0.resume(returning: Data()) } } }
        let fixture = try DPoPFixture(signer: signer, options: AuthorizationOptions(requestDeadline: 5))
        #expect(fixture.provider.endsByDeadline)
        let request = Task { try await fixture.get() }
        await fixture.clock.waitForSleepers(count: 1)
        fixture.clock.advance(by: 6)
        await #expect(throws: RequestError.self) { try await request.value }
        do { _ = try await request.value } catch let error as RequestError { #expect(error.code == .deadlineExceeded) }
        #expect(fixture.transport.requests.isEmpty)
    }
}

@Suite struct DPoPTokenTests {
    @Test func fiftyConcurrentRequestsCauseOneTokenRequest() async throws {
        let fixture = try DPoPFixture()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<50 { group.addTask { try await fixture.get() } }
            try await group.waitForAll()
        }
        #expect(fixture.tokenRequests.count == 1)
        #expect(fixture.resourceRequests.count == 50)
        #expect(fixture.resourceRequests.allSatisfy { $0.value(forHeader: "Authorization") == "DPoP token-1" })
        #expect(Set(fixture.resourceRequests.compactMap { $0.value(forHeader: "DPoP") }).count == 50)
    }

    @Test func aTokenRequestRefusedWithUseDPoPNonceIsRetriedOnceWithTheNonce() async throws {
        let fixture = try DPoPFixture()
        fixture.transport.enqueue(tokenRefusal("use_dpop_nonce", nonce: "nonce-A"))
        try await fixture.get()
        let tokenRequests = fixture.tokenRequests
        #expect(tokenRequests.count == 2)
        #expect(try ReadProof(try #require(tokenRequests[0].value(forHeader: "DPoP"))).nonce == nil)
        let retried = try ReadProof(try #require(tokenRequests[1].value(forHeader: "DPoP")))
        #expect(retried.nonce == "nonce-A")
        let first = try ReadProof(try #require(tokenRequests[0].value(forHeader: "DPoP")))
        #expect(retried.jti != first.jti)
        #expect(fixture.resourceRequests.first?.value(forHeader: "Authorization") == "DPoP token-1")
    }

    @Test func aTokenRequestRefusedWithUseDPoPNonceTwiceFails() async throws {
        let fixture = try DPoPFixture()
        fixture.transport.enqueue(tokenRefusal("use_dpop_nonce", nonce: "nonce-A"), tokenRefusal("use_dpop_nonce", nonce: "nonce-B"))
        do {
            try await fixture.get()
            Issue.record("sent")
        } catch {
            #expect(error.code == .dpopTokenRequestFailed)
            #expect(error.description.contains("use_dpop_nonce"))
        }
        #expect(fixture.tokenRequests.count == 2)
        #expect(fixture.resourceRequests.isEmpty)
    }

    @Test func anExpiredTokenIsReplacedBeforeTheRequestIsSent() async throws {
        let fixture = try DPoPFixture()
        try await fixture.get()
        fixture.clock.advance(by: 560)   // 40 s left of 600: still used
        try await fixture.get()
        #expect(fixture.tokenRequests.count == 1)
        fixture.clock.advance(by: 20)    // 20 s left: within the 30 s leeway
        try await fixture.get()
        #expect(fixture.tokenRequests.count == 2)
        #expect(fixture.resourceRequests.map { $0.value(forHeader: "Authorization") } == ["DPoP token-1", "DPoP token-1", "DPoP token-2"])
        let proof = try ReadProof(try #require(fixture.resourceRequests.last?.value(forHeader: "DPoP")))
        #expect(proof.ath == expectedATH("token-2"))
        #expect(proof.iat == Int(fixture.clock.now().timeIntervalSince1970))
    }

    @Test func aWallClockSetBackDoesNotKeepATokenPastItsLifetime() async throws {
        let fixture = try DPoPFixture()
        try await fixture.get()
        fixture.clock.advance(by: 600)
        fixture.clock.setWallClock(to: fixture.clock.now().addingTimeInterval(-600))
        try await fixture.get()
        #expect(fixture.tokenRequests.count == 2)
    }

    @Test(arguments: [
        ("invalid_client", 400),
        ("unsupported_grant_type", 400),
        ("invalid_dpop_proof", 400),
        ("server_error", 503),
    ])
    func aRefusedTokenRequestFailsWithTheModesCodeNamingTheServersErrorAndNoSecret(serverError: String, status: Int) async throws {
        let fixture = try DPoPFixture()
        fixture.transport.enqueue(.response(ServerResponse(statusCode: status, body: Data(#"{"error":"\#(serverError)"}"#.utf8))))
        do {
            try await fixture.get()
            Issue.record("sent")
        } catch {
            #expect(error.code == .dpopTokenRequestFailed)
            #expect(error.statusCode == status)
            #expect(!error.wasSent)
            #expect(error.description == "The DPoP access token could not be fetched: the token endpoint refused the token request with HTTP \(status) ('\(serverError)'); the request was not sent")
            fixture.expectNoSecret(in: [error.description, String(reflecting: error)])
        }
        #expect(fixture.resourceRequests.isEmpty)
        #expect(fixture.sink.diagnostics.contains { $0.message.contains("The DPoP token request failed") })
        fixture.expectNoSecret(in: fixture.sink.diagnostics.map(\.message))
    }

    @Test func anUnreachableTokenEndpointFailsWithTheModesCode() async throws {
        struct Offline: Error, CustomStringConvertible { var description: String { "offline" } }
        let fixture = try DPoPFixture()
        fixture.transport.enqueue(.failure(Offline()))
        do {
            try await fixture.get()
            Issue.record("sent")
        } catch {
            #expect(error.code == .dpopTokenRequestFailed)
            #expect(error.description.contains("could not be sent"))
            fixture.expectNoSecret(in: [error.description])
        }
        // The next request fetches anew.
        try await fixture.get()
        #expect(fixture.tokenRequests.count == 2)
    }

    @Test(arguments: [
        ("larger than 16384 bytes", #"{"access_token":"big","token_type":"DPoP","expires_in":600,"pad":"\#(String(repeating: "x", count: 20_000))"}"#),
        ("no token_type DPoP", #"{"access_token":"token-bearer","token_type":"Bearer","expires_in":600}"#),
        ("no token_type DPoP", #"{"access_token":"token-untyped","expires_in":600}"#),
        ("not a b64token", #"{"access_token":"token with space","token_type":"DPoP","expires_in":600}"#),
        ("not a b64token", #"{"access_token":"tok\r\nX-Injected: 1","token_type":"DPoP","expires_in":600}"#),
        ("not a b64token", #"{"access_token":"","token_type":"DPoP","expires_in":600}"#),
        ("longer than 8192 bytes", #"{"access_token":"\#(String(repeating: "a", count: 8_193))","token_type":"DPoP","expires_in":600}"#),
        ("not a number of seconds from 1 to 86400", #"{"access_token":"token-long-lived","token_type":"DPoP","expires_in":86401}"#),
        ("not a number of seconds from 1 to 86400", #"{"access_token":"token-negative","token_type":"dpop","expires_in":-5}"#),
        ("not a number of seconds from 1 to 86400", #"{"access_token":"token-zero","token_type":"DPoP","expires_in":0}"#),
        ("not a number of seconds from 1 to 86400", #"{"access_token":"token-text","token_type":"DPoP","expires_in":"600"}"#),
        ("not a JSON object", #"["token-array"]"#),
        ("not a JSON object", "\(String(repeating: "[", count: 100))"),
    ])
    func aHostileTokenAnswerIsRefusedAndNothingIsSentWithIt(reason: String, body: String) async throws {
        let fixture = try DPoPFixture()
        fixture.transport.enqueue(.response(ServerResponse(statusCode: 200, body: Data(body.utf8))))
        do {
            try await fixture.get()
            Issue.record("sent")
        } catch {
            #expect(error.code == .dpopTokenRequestFailed)
            #expect(error.description.contains(reason))
            #expect(error.response == nil)
            for token in ["token-bearer", "token-untyped", "token with space", "token-negative", "token-zero", "token-text", "token-array", "token-long-lived", "X-Injected"] {
                #expect(!error.description.contains(token))
            }
        }
        #expect(fixture.resourceRequests.isEmpty)
    }

    @Test func aLowerCaseTokenTypeIsAccepted() async throws {
        let fixture = try DPoPFixture()
        fixture.transport.enqueue(tokenAnswer("token-lower", type: "dpop"))
        try await fixture.get()
        #expect(fixture.resourceRequests.first?.value(forHeader: "Authorization") == "DPoP token-lower")
    }

    @Test func everyTokenRequestAsksTheRefreshWindowFirst() async throws {
        let fixture = try DPoPFixture(options: AuthorizationOptions(refreshWindow: AuthorizationOptions.RefreshWindow(maximumRefreshes: 2, interval: 3_600)))
        try await fixture.get()                // the first token: one refresh
        fixture.clock.advance(by: 580)
        try await fixture.get()                // expired: a second
        fixture.clock.advance(by: 580)
        do {
            try await fixture.get()            // expired again: the window is used up
            Issue.record("sent")
        } catch {
            #expect(error.code == .refreshWindowExceeded)
        }
        #expect(fixture.tokenRequests.count == 2)
        #expect(fixture.resourceRequests.count == 2)
    }
}
