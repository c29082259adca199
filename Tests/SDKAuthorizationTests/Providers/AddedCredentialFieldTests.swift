import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import SDKAuthorizationTesting
import Testing
import TestSupport
@testable import SDKAuthorization
import SDKAuthorizationModeKit

/// A credential with fields that go with it (`Credential.adding(_:value:)`) and an authorization
/// scheme of its own (`Credential.authorization(scheme:_:)`): what a proof-of-possession mode
/// (RFC 9449 DPoP: `Authorization: DPoP <token>` and `DPoP: <proof>`) needs from the core.
@Suite("Credentials with added fields", .hangLimit)
struct AddedCredentialFieldTests {
    let url = URL(string: "https://api.example.com/x")!

    func authorizer(_ provider: any AuthorizationProvider, diagnostics: RecordingDiagnosticsSink = RecordingDiagnosticsSink(),
                    options: AuthorizationOptions = AuthorizationOptions()) throws -> RequestAuthorizer {
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(host: "api.example.com", scheme: .bearer))
        return try RequestAuthorizer(policy: policy, providers: [.bearer: provider], options: options, diagnostics: diagnostics)
    }

    @Test func aSchemeCredentialWithAnAddedFieldSendsBothAndReplacesTheCallersFieldsOfThoseNames() async throws {
        let credential = Credential.authorization(scheme: "DPoP", "access-token").adding("DPoP", value: "proof.jwt.sig")
        let authorizer = try authorizer(ScriptedProvider(.credential(credential)))
        let request = OutgoingRequest(method: "GET", url: url, headers: ["dpop": "forged", "authorization": "Bearer forged", "Accept": "*/*"])
        let authorized = try await authorizer.authorize(request)
        #expect(authorized.request.value(forHeader: "Authorization") == "DPoP access-token")
        #expect(authorized.request.value(forHeader: "DPoP") == "proof.jwt.sig")
        #expect(authorized.request.headers.count == 3)
        #expect(authorized.request.value(forHeader: "Accept") == "*/*")
    }

    @Test func bearerSpelledAsASchemeIsTheBearerCredential() {
        #expect(Credential.authorization(scheme: "bearer", "t") == .bearer("t"))
    }

    @Test(arguments: [
        ("Host", "x"), ("Content-Length", "1"), ("Cookie", "a=b"), ("Proxy-Authorization", "x"), // owned by the transport
        ("Authorization", "x"), ("authorization", "x"), // the credential's own header
        ("Idempotency-Key", "x"), ("idempotency-key", "x"), // a queued request's idempotency key
        ("DPoP", "line\nbreak"), ("DPoP", "tab\there"), ("DPoP", ""), ("Bad Name", "x"), ("", "x"), // not a field
    ])
    func anAddedFieldTheRequestCannotCarryFailsItLocallyWithTheValueInNoMessage(name: String, value: String) async throws {
        let diagnostics = RecordingDiagnosticsSink()
        let credential = Credential.authorization(scheme: "DPoP", "access-token").adding(name, value: value)
        let authorizer = try authorizer(ScriptedProvider(.credential(credential)), diagnostics: diagnostics)
        let error = await #expect(throws: RequestError.self) { try await authorizer.authorize(OutgoingRequest(method: "GET", url: url)) }
        #expect(error?.code == .invalidCredential)
        let logged = diagnostics.diagnostics.map(\.message).joined(separator: "\n") + (error.map { "\($0)" } ?? "")
        #expect(!logged.contains("access-token"))
        if value.count > 1 { #expect(!logged.contains(value)) }
    }

    @Test(arguments: ["Idempotency-Key", "IDEMPOTENCY-KEY", "idempotency-key"])
    func aCredentialInTheIdempotencyKeyHeaderFailsTheRequestLocallyOnTheGeneralPath(name: String) async throws {
        for credential in [Credential.header(name, value: "secret-token"), .apiKey("secret-token", header: name)] {
            let diagnostics = RecordingDiagnosticsSink()
            let authorizer = try authorizer(ScriptedProvider(.credential(credential)), diagnostics: diagnostics)
            let error = await #expect(throws: RequestError.self) { try await authorizer.authorize(OutgoingRequest(method: "GET", url: url)) }
            #expect(error?.code == .invalidCredential)
            #expect(!diagnostics.diagnostics.map(\.message).joined().contains("secret-token"))
        }
        // Another header of the author's choice still goes.
        let authorized = try await authorizer(ScriptedProvider(.credential(.header("X-Session-Token", value: "t")))).authorize(OutgoingRequest(method: "GET", url: url))
        #expect(authorized.request.value(forHeader: "X-Session-Token") == "t")
    }

    @Test func theSameFieldAddedTwiceFailsTheRequestLocally() async throws {
        let credential = Credential.authorization(scheme: "DPoP", "t").adding("DPoP", value: "a").adding("dpop", value: "b")
        let authorizer = try authorizer(ScriptedProvider(.credential(credential)))
        let error = await #expect(throws: RequestError.self) { try await authorizer.authorize(OutgoingRequest(method: "GET", url: url)) }
        #expect(error?.code == .invalidCredential)
    }

    @Test func aFieldAddedToAnOmittedCredentialFailsTheRequestLocally() async throws {
        let authorizer = try authorizer(ScriptedProvider(.credential(Credential.omitted.adding("DPoP", value: "proof"))))
        let error = await #expect(throws: RequestError.self) { try await authorizer.authorize(OutgoingRequest(method: "GET", url: url)) }
        #expect(error?.code == .invalidCredential)
    }

    @Test(arguments: ["DP oP", "DPoP\r", ""])
    func aSchemeThatIsNotAnHTTPTokenFailsTheRequestLocally(scheme: String) async throws {
        let authorizer = try authorizer(ScriptedProvider(.credential(.authorization(scheme: scheme, "t"))))
        let error = await #expect(throws: RequestError.self) { try await authorizer.authorize(OutgoingRequest(method: "GET", url: url)) }
        #expect(error?.code == .invalidCredential)
    }

    @Test func aSchemeCredentialsTokenIsCheckedAsABearerToken() async throws {
        let authorizer = try authorizer(ScriptedProvider(.credential(.authorization(scheme: "DPoP", "not b64token"))))
        let error = await #expect(throws: RequestError.self) { try await authorizer.authorize(OutgoingRequest(method: "GET", url: url)) }
        #expect(error?.code == .invalidCredential)
    }

    @Test(arguments: [
        Credential.authorization(scheme: "DPoP", "not b64token").adding("DPoP", value: "proof"),
        Credential.authorization(scheme: "DP oP", "t").adding("DPoP", value: "proof"),
        Credential.authorization(scheme: "DPoP", "t").adding("Host", value: "x").adding("DPoP", value: "proof"),
    ])
    func aCredentialThatFailsStillFailsOnceAGoodFieldIsAddedToIt(credential: Credential) async throws {
        let authorizer = try authorizer(ScriptedProvider(.credential(credential)))
        let error = await #expect(throws: RequestError.self) { try await authorizer.authorize(OutgoingRequest(method: "GET", url: url)) }
        #expect(error?.code == .invalidCredential)
    }

    @Test(arguments: [301, 302, 303, 307, 308])
    func aRedirectToAnotherOriginDropsTheAddedFieldsWithTheCredentialEvenWhenTheCallerForwardsThem(status: Int) async throws {
        let credential = Credential.authorization(scheme: "DPoP", "access-token").adding("DPoP", value: "proof")
        let authorizer = try authorizer(ScriptedProvider(.credential(credential)), options: AuthorizationOptions(forwardedHeaderNames: ["DPoP", "Authorization"]))
        let authorized = try await authorizer.authorize(OutgoingRequest(method: "GET", url: url))
        let other = try #require(try authorizer.redirect(authorized, after: ServerResponse(statusCode: status, headers: ["Location": "https://cdn.example.net/z"])))
        #expect(other.request.value(forHeader: "DPoP") == nil)
        #expect(other.request.value(forHeader: "Authorization") == nil)
        // Another origin gets no new credential either.
        #expect(!other.needsNewCredential)
        #expect(try await authorizer.authorize(redirected: other).request.value(forHeader: "DPoP") == nil)
    }

    @Test func anAuthorizedURLRequestCarriesTheAddedFields() async throws {
        let credential = Credential.authorization(scheme: "DPoP", "access-token").adding("DPoP", value: "proof")
        let authorizer = try authorizer(ScriptedProvider(.credential(credential)))
        let authorized = try await authorizer.authorize(URLRequest(url: url))
        #expect(authorized.value(forHTTPHeaderField: "Authorization") == "DPoP access-token")
        #expect(authorized.value(forHTTPHeaderField: "DPoP") == "proof")
    }

    @Test func theDescriptionDumpAndMirrorShowNoTokenAndNoFieldValue() {
        let token = "access-token-0123456789abcdefghij", proof = "proof-0123456789abcdefghijklmnop"
        let credential = Credential.authorization(scheme: "DPoP", token).adding("DPoP", value: proof)
        var dumped = ""
        dump(credential, to: &dumped)
        for text in [credential.description, credential.debugDescription, dumped, String(reflecting: credential)] {
            #expect(!text.contains(token))
            #expect(!text.contains(proof))
        }
        #expect(credential.description.hasPrefix("DPoP credential "))
        #expect(credential.description.contains(" with DPoP "))
        #expect(credential.addedFieldNames == ["DPoP"])
    }

    /// Each request carries its own proof, so the credentials differ; the refresh window counts the
    /// token they share, once: the second rejection retries without taking a refresh of its own.
    @Test func requestsRejectedWithOneTokenButDifferentProofsTakeOneRefreshFromTheWindow() async throws {
        let provider = ScriptedProvider(
            .credential(Credential.authorization(scheme: "DPoP", "t1").adding("DPoP", value: "proof-1")),
            .credential(Credential.authorization(scheme: "DPoP", "t1").adding("DPoP", value: "proof-2")))
        provider.rejectionDecision = .retry
        let options = AuthorizationOptions(refreshWindow: AuthorizationOptions.RefreshWindow(maximumRefreshes: 1, interval: 60))
        let authorizer = try authorizer(provider, options: options)
        let rejected = ServerResponse(statusCode: 401)
        let first = try await authorizer.authorize(OutgoingRequest(method: "GET", url: url))
        let second = try await authorizer.authorize(OutgoingRequest(method: "GET", url: url))
        #expect(first.request.value(forHeader: "DPoP") != second.request.value(forHeader: "DPoP"))
        #expect(await authorizer.evaluate(rejected, to: first) == .retry)
        // With the proofs counted as different credentials, the window (1 refresh) would refuse this.
        #expect(await authorizer.evaluate(rejected, to: second) == .retry)
    }

    // MARK: Redirects within the origin

    /// A proof names the method and URL it was made for: the hop to another URL of the same origin
    /// gets a new one from the provider, through every path that runs the loop.
    @Test(arguments: [301, 302, 303, 307, 308])
    func aRedirectWithinTheOriginAsksTheProviderForANewCredentialForTheNewURL(status: Int) async throws {
        let provider = ScriptedProvider(
            .credential(Credential.authorization(scheme: "DPoP", "t").adding("DPoP", value: "proof-for-x")),
            .credential(Credential.authorization(scheme: "DPoP", "t").adding("DPoP", value: "proof-for-y")))
        let authorizer = try authorizer(provider)
        let sent = Locked<[OutgoingRequest]>([])
        let response = try await authorizer.send(OutgoingRequest(method: "GET", url: url)) { request in
            let count = sent.withLock { $0.append(request); return $0.count }
            return count == 1 ? ServerResponse(statusCode: status, headers: ["Location": "/y"]) : ServerResponse(statusCode: 200)
        }
        #expect(response.statusCode == 200)
        let requests = sent.withLock { $0 }
        #expect(requests.map { $0.value(forHeader: "DPoP") } == ["proof-for-x", "proof-for-y"])
        #expect(requests.last?.value(forHeader: "Authorization") == "DPoP t")
        #expect(provider.requestedContexts.map(\.url.path) == ["/x", "/y"])
        #expect(provider.requestedContexts.map(\.attempt) == [1, 1])
    }

    /// Each hop is authorized again, and still counts against the redirect limit: a server that
    /// redirects forever ends the request, it does not loop.
    @Test func hopsThatEachGetANewCredentialStillEndAtTheRedirectLimit() async throws {
        let provider = ScriptedProvider(.credential(Credential.authorization(scheme: "DPoP", "t").adding("DPoP", value: "proof")))
        let authorizer = try authorizer(provider, options: AuthorizationOptions(redirectLimit: 3))
        let sends = Locked(0)
        let error = await #expect(throws: RequestError.self) {
            try await authorizer.send(OutgoingRequest(method: "GET", url: url)) { _ in
                let count = sends.withLock { $0 += 1; return $0 }
                return ServerResponse(statusCode: 302, headers: ["Location": "/hop-\(count)"])
            }
        }
        #expect(error?.code == .tooManyRedirects)
        #expect(sends.withLock { $0 } == 4)
        #expect(provider.requestedContexts.map(\.url.path) == ["/x", "/hop-1", "/hop-2", "/hop-3"])
    }

    @Test func aRedirectWithinTheOriginKeepsACredentialWithoutAddedFieldsAndAsksNothing() async throws {
        let provider = ScriptedProvider(.token("t1"), .token("t2"))
        let authorizer = try authorizer(provider)
        let sent = Locked<[OutgoingRequest]>([])
        _ = try await authorizer.send(OutgoingRequest(method: "GET", url: url)) { request in
            let count = sent.withLock { $0.append(request); return $0.count }
            return count == 1 ? ServerResponse(statusCode: 302, headers: ["Location": "/y"]) : ServerResponse(statusCode: 200)
        }
        #expect(sent.withLock { $0.map { $0.value(forHeader: "Authorization") } } == ["Bearer t1", "Bearer t1"])
        #expect(provider.requestedContexts.count == 1)
    }

    /// For a stack that runs the steps itself: the hop never carries the proof made for the first URL.
    @Test func redirectTakesOffACredentialWithAddedFieldsAndSaysTheHopNeedsANewOne() async throws {
        let credential = Credential.authorization(scheme: "DPoP", "t").adding("DPoP", value: "proof-for-x")
        let authorizer = try authorizer(ScriptedProvider(.credential(credential)))
        let authorized = try await authorizer.authorize(OutgoingRequest(method: "GET", url: url, headers: ["Accept": "*/*"]))
        let next = try #require(try authorizer.redirect(authorized, after: ServerResponse(statusCode: 307, headers: ["Location": "/y"])))
        #expect(next.request.value(forHeader: "DPoP") == nil)
        #expect(next.request.value(forHeader: "Authorization") == nil)
        #expect(next.request.value(forHeader: "Accept") == "*/*")
        #expect(!next.carriesCredential)
        #expect(next.needsNewCredential)
        #expect(!authorized.needsNewCredential)
    }

    // MARK: A retry that is no refresh

    @Test func aRetryWithoutRefreshTakesNoPlaceInTheRefreshWindow() async throws {
        let provider = ScriptedProvider(.token("t1"), .token("t2"), .token("t3"))
        let options = AuthorizationOptions(refreshWindow: AuthorizationOptions.RefreshWindow(maximumRefreshes: 1, interval: 60))
        let authorizer = try authorizer(provider, options: options)
        let rejected = ServerResponse(statusCode: 401)
        let first = try await authorizer.authorize(OutgoingRequest(method: "GET", url: url))
        let second = try await authorizer.authorize(OutgoingRequest(method: "GET", url: url))
        let third = try await authorizer.authorize(OutgoingRequest(method: "GET", url: url))
        provider.rejectionDecision = .retryWithoutRefresh
        #expect(await authorizer.evaluate(rejected, to: first) == .retry)
        provider.rejectionDecision = .retry
        #expect(await authorizer.evaluate(rejected, to: second) == .retry)
        // The window's one refresh is taken by `second`, not by `first`'s nonce retry.
        let exceeded = await authorizer.evaluate(rejected, to: third)
        guard case .fail(let error) = exceeded else { Issue.record("expected a failure, got \(exceeded)"); return }
        #expect(error.code == .refreshWindowExceeded)
    }

    @Test func aRetryWithoutRefreshIsStillOneRetryPerRequest() async throws {
        let provider = ScriptedProvider(.token("t1"))
        provider.rejectionDecision = .retryWithoutRefresh
        let authorizer = try authorizer(provider)
        let sends = Locked(0)
        let error = await #expect(throws: RequestError.self) {
            try await authorizer.send(OutgoingRequest(method: "GET", url: url)) { _ in
                sends.withLock { $0 += 1 }
                return ServerResponse(statusCode: 401)
            }
        }
        #expect(error?.code == .authorizationRejected)
        #expect(sends.withLock { $0 } == 2)
    }
}
