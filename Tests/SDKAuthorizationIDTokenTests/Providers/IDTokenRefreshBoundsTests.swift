import Foundation
import SDKAuthorizationModeKit
import SDKAuthorizationTesting
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationIDToken

/// The ID-token mode's refreshes are bounded as the core's refreshing providers' are, through the
/// same public seams (`Credential.Issuer`, the context's refresh window): none for a request a
/// logout overtook, no more than the refresh window allows whatever starts them, and a refreshed
/// token that has already expired fails the requests instead of starting a loop.
@Suite("ID token: no refresh after a logout, the refresh window's number at most", .hangLimit)
struct IDTokenRefreshBoundsTests {
    let clock = ManualClock()
    let sink = RecordingDiagnosticsSink()
    let url = URL(string: "https://api.rover.io/graphql")!

    func store() throws -> IDTokenStore {
        try IDTokenStore(authorizedDomains: ["api.rover.io"], clock: clock, diagnostics: sink)
    }

    func token(_ number: Int, expiresIn seconds: TimeInterval = 3_600) -> String {
        makeJWT(["sub": "user", "n": number, "exp": clock.now().timeIntervalSince1970 + seconds])
    }

    func client(_ provider: any AuthorizationProvider, transport: RecordingTransport, window: AuthorizationOptions.RefreshWindow = AuthorizationOptions.RefreshWindow()) throws -> AuthorizedHTTPClient {
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(host: "api.rover.io", scheme: .bearer))
        let authorizer = try RequestAuthorizer(policy: policy, providers: [.bearer: provider],
                                               options: AuthorizationOptions(refreshWindow: window, requestDeadline: 60), clock: clock, diagnostics: sink)
        return AuthorizedHTTPClient(authorizer: authorizer, transport: transport)
    }

    func start(_ client: AuthorizedHTTPClient) -> Task<Result<ServerResponse, RequestError>, Never> {
        Task { [url] () -> Result<ServerResponse, RequestError> in
            do throws(RequestError) { return .success(try await client.send(OutgoingRequest(method: "GET", url: url))) } catch { return .failure(error) }
        }
    }

    /// The refresh callback fetches the new token through the client it refreshes for, and that
    /// request needs the ID token: it fails at once (the refresh with it) instead of waiting for
    /// itself until the refresh timeout, on a clock that never moves.
    @Test func aRefreshThatSendsThroughItsOwnClientFailsAtOnceInsteadOfWaitingForItself() async throws {
        let idTokens = try store()
        let box = Locked<AuthorizedHTTPClient?>(nil)
        idTokens.registerTokenRefresh { [url] in
            let client = try #require(box.withLock { $0 })
            _ = try await client.send(OutgoingRequest(method: "POST", url: url.appendingPathComponent("token")))
            return "unreachable"
        }
        let api = RecordingTransport()
        let client = try client(idTokens, transport: api)
        box.withLock { $0 = client }
        let request = start(client)
        let ended = Counter()
        let watched = Task { _ = await request.value; _ = ended.increment() }
        await eventually("the request ended without the clock moving", { ended.current == 1 })
        request.cancel()
        await watched.value
        guard case .failure(let error) = await request.value else { Issue.record("the request succeeded"); return }
        #expect(error.code == .refreshWaitsForItself, "\(error)")
        #expect(api.requests.isEmpty, "neither the request nor the token request was sent")
    }

    @Test func aRequestRejectedAfterALogoutFailsAsClearedAtItsEvaluationWithoutARefreshOrASecondSend() async throws {
        let idTokens = try store()
        let refreshes = Counter()
        idTokens.registerTokenRefresh { [self] in token(refreshes.increment()) }
        try idTokens.setIDToken(token(0))
        let held = AsyncGate(), arrived = Counter()
        let api = RecordingTransport { _ in
            _ = arrived.increment()
            await held.wait()
            return ServerResponse(statusCode: 401)
        }
        let request = start(try client(idTokens, transport: api))
        await eventually("the request reached the server", { arrived.current == 1 })
        idTokens.clearIDToken()
        held.open()
        guard case .failure(let error) = await request.value else { Issue.record("the request succeeded"); return }
        #expect(error.code == .credentialCleared)
        #expect(error.wasSent)
        // Which check stopped it: the evaluation's (it fails with the 401 it saw and says so), not
        // the retry's or the provider's, which would also stop it had the evaluation let it through.
        #expect(error.response?.statusCode == 401)
        #expect(sink.messages(at: .info).contains { $0.contains("after a logout; it fails as cleared, without a refresh or a retry") })
        #expect(api.requests.map { $0.value(forHeader: "Authorization") } == ["Bearer \(token(0))"], "never sent with a token fetched after the logout")
        #expect(refreshes.current == 0, "nothing refreshed for it after the logout")
    }

    @Test(arguments: [1, 2])
    func theRefreshWindowCapsTheRefreshCallbackWhenTheServerRejectsEveryToken(_ maximum: Int) async throws {
        let idTokens = try store()
        let refreshes = Counter()
        idTokens.registerTokenRefresh { [self] in token(refreshes.increment()) }
        let api = RecordingTransport(statusCode: 401)
        let client = try client(idTokens, transport: api, window: AuthorizationOptions.RefreshWindow(maximumRefreshes: maximum, interval: 30))
        var codes: [RequestError.Code?] = []
        for _ in 0..<5 {
            if case .failure(let error) = await start(client).value { codes.append(error.code) } else { codes.append(nil) }
        }
        #expect(refreshes.current == maximum, "every refresh counts, the first one too")
        #expect(codes.last == .refreshWindowExceeded)
        #expect(codes.allSatisfy { $0 == .authorizationRejected || $0 == .refreshWindowExceeded })
    }

    @Test func aRefreshedTokenThatHasAlreadyExpiredFailsTheRequestsAndRefreshesNoMoreThanTheWindowAllows() async throws {
        let idTokens = try store()
        let refreshes = Counter()
        idTokens.registerTokenRefresh { [self] in token(refreshes.increment(), expiresIn: -1) }
        let api = RecordingTransport()
        let client = try client(idTokens, transport: api, window: AuthorizationOptions.RefreshWindow(maximumRefreshes: 2, interval: 30))
        var codes: [RequestError.Code?] = []
        for _ in 0..<5 {
            if case .failure(let error) = await start(client).value { codes.append(error.code) } else { codes.append(nil) }
        }
        #expect(codes == [.refreshedCredentialExpired, .refreshedCredentialExpired, .refreshWindowExceeded, .refreshWindowExceeded, .refreshWindowExceeded])
        #expect(refreshes.current == 2)
        #expect(api.requests.isEmpty)
    }
}
