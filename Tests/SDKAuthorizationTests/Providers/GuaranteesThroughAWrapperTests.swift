import Foundation
import SDKAuthorizationTesting
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationModeKit

/// The guarantees of `RefreshingTokenProvider` hold when the app installs it behind a forwarding
/// decorator of its own (one that counts calls, as apps add metrics or logging): the authorizer then
/// sees only the decorator's type, so each guarantee must live in the provider itself.
@Suite("RefreshingTokenProvider keeps its guarantees behind a forwarding decorator", .hangLimit)
struct GuaranteesThroughAWrapperTests {
    let clock = ManualClock()
    let sink = RecordingDiagnosticsSink()
    let url = URL(string: "https://api.example.com/v1/me")!

    /// An app's decorator: counts the calls and forwards every one of them to the provider it wraps.
    final class CountingDecorator: AuthorizationProvider, Sendable {
        let wrapped: any AuthorizationProvider
        let calls = Counter()
        init(_ wrapped: any AuthorizationProvider) { self.wrapped = wrapped }

        func credential(for context: AuthorizationContext) async throws -> Credential {
            _ = calls.increment()
            return try await wrapped.credential(for: context)
        }
        func credentialRejected(_ credential: Credential, response: ServerResponse, context: AuthorizationContext) async -> RejectionDecision {
            _ = calls.increment()
            return await wrapped.credentialRejected(credential, response: response, context: context)
        }
        func credentialAccepted(_ credential: Credential, response: ServerResponse, context: AuthorizationContext) async {
            _ = calls.increment()
            await wrapped.credentialAccepted(credential, response: response, context: context)
        }
        var inspectsAcceptedResponses: Bool { wrapped.inspectsAcceptedResponses }
        func identityDidChange() async {
            _ = calls.increment()
            await wrapped.identityDidChange()
        }
        var endsByDeadline: Bool { wrapped.endsByDeadline }
    }

    func client(_ provider: any AuthorizationProvider, transport: RecordingTransport, deadline: TimeInterval = 60,
                window: AuthorizationOptions.RefreshWindow = AuthorizationOptions.RefreshWindow()) throws -> AuthorizedHTTPClient {
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(host: "api.example.com", scheme: .bearer))
        let authorizer = try RequestAuthorizer(policy: policy, providers: [.bearer: CountingDecorator(provider)],
                                               options: AuthorizationOptions(refreshWindow: window, requestDeadline: deadline),
                                               clock: clock, diagnostics: sink)
        return AuthorizedHTTPClient(authorizer: authorizer, transport: transport)
    }

    func start(_ client: AuthorizedHTTPClient) -> Task<Result<ServerResponse, RequestError>, Never> {
        Task { [url] () -> Result<ServerResponse, RequestError> in
            do throws(RequestError) { return .success(try await client.send(OutgoingRequest(method: "GET", url: url))) } catch { return .failure(error) }
        }
    }

    func send(_ client: AuthorizedHTTPClient) async -> RequestError.Code? {
        if case .failure(let error) = await start(client).value { return error.code }
        return nil
    }

    // MARK: Logout wins over a 401 in flight

    @Test func aRequestRejectedAfterALogoutIsNeitherRefreshedForNorSentAgainThroughADecorator() async throws {
        let refreshes = Counter()
        let provider = try RefreshingTokenProvider(token: .init("a0"), clock: clock, diagnostics: sink) { .init("a\(refreshes.increment())") }
        let held = AsyncGate()
        let arrived = Counter()
        let api = RecordingTransport { _ in
            _ = arrived.increment()
            await held.wait()
            return ServerResponse(statusCode: 401)
        }
        let request = start(try client(provider, transport: api))
        await eventually("the request reached the server", { arrived.current == 1 })
        provider.clearToken()
        held.open()
        guard case .failure(let error) = await request.value else { Issue.record("the request succeeded"); return }
        #expect(error.code == .credentialCleared)
        #expect(error.wasSent)
        #expect(api.requests.map { $0.value(forHeader: "Authorization") } == ["Bearer a0"])
        #expect(refreshes.current == 0)
        // The next request, after the logout, refreshes as usual.
        _ = await send(try client(provider, transport: RecordingTransport()))
        #expect(refreshes.current == 1)
    }

    @Test func aRequestRejectedBeforeALogoutIsStillRefreshedForOnceThroughADecorator() async throws {
        let refreshes = Counter()
        let provider = try RefreshingTokenProvider(token: .init("a0"), clock: clock, diagnostics: sink) { .init("a\(refreshes.increment())") }
        let api = RecordingTransport()
        api.enqueue(.response(ServerResponse(statusCode: 401)))
        #expect(await send(try client(provider, transport: api)) == nil)
        #expect(api.requests.map { $0.value(forHeader: "Authorization") } == ["Bearer a0", "Bearer a1"])
        #expect(refreshes.current == 1)
    }

    @Test func aRejectionOfATokenIssuedBeforeAnIdentityChangeAsksForNoRetryEvenAfterANewLogin() async throws {
        let refreshes = Counter()
        let provider = try RefreshingTokenProvider(token: .init("a0"), clock: clock, diagnostics: sink) { .init("a\(refreshes.increment())") }
        let decorator = CountingDecorator(provider)
        let context = AuthorizationContext(endpoint: "me", url: url)
        let before = try await decorator.credential(for: context)
        await decorator.identityDidChange()
        try provider.setToken(.init("b0"))   // the next user logs in
        let after = try await decorator.credential(for: context)
        let unauthorized = ServerResponse(statusCode: 401)
        #expect(await decorator.credentialRejected(before, response: unauthorized, context: context) == .fail)
        // The new user's token is still refreshed for when the server rejects it.
        #expect(await decorator.credentialRejected(after, response: unauthorized, context: context) == .retry)
        #expect(try await decorator.credential(for: context) == .bearer("a1"))
        #expect(refreshes.current == 1)
    }

    // MARK: The refresh window bounds every refresh

    @Test func theRefreshWindowCapsTheRefreshesOfAProviderBehindADecorator() async throws {
        let refreshes = Counter()
        let provider = try RefreshingTokenProvider(token: .init("a0"), clock: clock, diagnostics: sink) { .init("a\(refreshes.increment())") }
        let api = RecordingTransport(statusCode: 401)
        let client = try client(provider, transport: api, window: AuthorizationOptions.RefreshWindow(maximumRefreshes: 2, interval: 30))
        var codes: [RequestError.Code?] = []
        for _ in 0..<4 { codes.append(await send(client)) }
        #expect(refreshes.current == 2)
        #expect(codes == [.authorizationRejected, .refreshWindowExceeded, .refreshWindowExceeded, .refreshWindowExceeded])
        #expect(api.requests.map { $0.value(forHeader: "Authorization") } == ["Bearer a0", "Bearer a1", "Bearer a2"])
    }

    // MARK: One refresh for many waiters

    @Test func fiftyRequestsRejectedWithOneStaleTokenShareOneRefreshThroughADecorator() async throws {
        let refreshes = Counter()
        let server = AsyncGate()
        let provider = try RefreshingTokenProvider(token: .init("a0"), clock: clock, diagnostics: sink) {
            let number = refreshes.increment()
            await server.wait()
            return .init("a\(number)")
        }
        let arrived = Counter()
        let rejecting = AsyncGate()   // the server answers the fifty requests carrying a0 once all have come
        let api = RecordingTransport { request in
            guard request.value(forHeader: "Authorization") == "Bearer a0" else { return ServerResponse(statusCode: 200) }
            _ = arrived.increment()
            await rejecting.wait()
            return ServerResponse(statusCode: 401)
        }
        let client = try client(provider, transport: api)
        let requests = (0..<50).map { _ in start(client) }
        await eventually("all fifty reached the server with a0", { arrived.current == 50 })
        rejecting.open()
        await eventually("all fifty were rejected and wait for the refresh", { provider.description.contains("waiting: 50") })
        server.open()
        for request in requests {
            if case .failure(let error) = await request.value { Issue.record("a request failed: \(error.code)") }
        }
        #expect(refreshes.current == 1)
        #expect(api.requests.filter { $0.value(forHeader: "Authorization") == "Bearer a1" }.count == 50)
    }

    // MARK: A request's deadline ends its wait

    @Test func aRequestWaitingForARefreshThatNeverAnswersEndsAtItsDeadlineThroughADecorator() async throws {
        let server = AsyncGate()   // a token server that does not answer
        let provider = try RefreshingTokenProvider(options: .init(refreshTimeout: 600), clock: clock, diagnostics: sink) {
            await server.wait()
            return .init("late-token")
        }
        defer { server.open() }
        let api = RecordingTransport()
        let client = try client(provider, transport: api, deadline: 5)
        let ended = Locked(false)
        let request = Task { () -> Result<ServerResponse, RequestError> in
            defer { ended.withLock { $0 = true } }
            return await start(client).value
        }
        await eventually("the request waits for the refresh", { provider.description.contains("waiting: 1") })
        clock.advance(by: 4.9)
        #expect(provider.description.contains("waiting: 1"))
        clock.advance(by: 0.1)
        await eventually("the request ended at its deadline", { ended.withLock { $0 } })
        guard ended.withLock({ $0 }) else { provider.clearToken(); return }   // ends the wait, so the test ends
        guard case .failure(let error) = await request.value else { Issue.record("the request got a token"); return }
        #expect(error.code == .deadlineExceeded)
        #expect(api.requests.isEmpty)
    }
}
