import Foundation
import SDKAuthorizationTesting
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationModeKit
import SDKAuthorizationIDToken
import SDKAuthorizationTokenExchange

/// Every refreshing provider keeps its guarantees when the app installs it behind a forwarding
/// decorator written the naive way (``CountingForwardingDecorator``: `credential(for:)` and the
/// rejection hook, nothing else), as it keeps them installed directly: logout wins over a 401 in
/// flight, the refresh window bounds every refresh, one refresh for many waiters, every wait ends at
/// its request's deadline. The authorizer sees only the decorator's type, so each guarantee must
/// live with the provider's own state.
@Suite("Every refreshing provider keeps its guarantees behind an app's forwarding decorator", .hangLimit)
struct EveryRefreshingProviderThroughADecoratorTests {
    enum Kind: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case refreshingToken, caching, idToken, tokenExchange
        var testDescription: String { rawValue }
    }

    let clock = ManualClock()
    let sink = RecordingDiagnosticsSink()
    let url = URL(string: "https://api.example.com/v1/me")!

    /// A provider under test and what a test drives it with.
    struct Subject: Sendable {
        let provider: any AuthorizationProvider
        /// Logs the user out, as the app does on that provider.
        let logout: @Sendable () async -> Void
        /// Refreshes started: token fetches, refresh callbacks, signings, calls into the cached provider.
        let fetches: Counter
        /// The token each fetch returned, by its number.
        let tokens: Locked<[Int: String]>

        /// The number of the fetch whose token `request` carries.
        func fetchNumber(of request: OutgoingRequest) -> Int? {
            guard let header = request.value(forHeader: "Authorization"), header.hasPrefix("Bearer ") else { return nil }
            let token = String(header.dropFirst("Bearer ".count))
            return tokens.withLock { tokens in tokens.first { $0.value == token }?.key }
        }
    }

    /// A provider the app wrote, cached by ``CachingAuthorizationProvider``: asks for a token on
    /// every call and asks for a retry on a 401.
    struct FetchingProvider: AuthorizationProvider {
        let fetch: @Sendable () async -> String
        func credential(for context: AuthorizationContext) async throws -> Credential { .bearer(await fetch()) }
        func credentialRejected(_ credential: Credential, response: ServerResponse, context: AuthorizationContext) async -> RejectionDecision {
            response.statusCode == 401 ? .retry : .fail
        }
    }

    /// A fresh provider of `kind` whose fetches, from the `holdingFrom`th on, wait for `hold`.
    func subject(_ kind: Kind, hold: AsyncGate? = nil, holdingFrom: Int = 1) throws -> Subject {
        let fetches = Counter()
        let tokens = Locked<[Int: String]>([:])
        // A JWT valid for an hour, so every provider (the cache too) reuses it until it is rejected.
        let fetch: @Sendable () async -> String = { [clock] in
            let number = fetches.increment()
            let now = clock.now().timeIntervalSince1970
            let token = makeJWT(["sub": "user", "n": number, "iat": now, "exp": now + 3_600])
            tokens.withLock { $0[number] = token }
            if number >= holdingFrom { await hold?.wait() }
            return token
        }
        switch kind {
        case .refreshingToken:
            let provider = try RefreshingTokenProvider(options: .init(refreshTimeout: 600), clock: clock, diagnostics: sink) {
                RefreshingTokenProvider.Token(await fetch())
            }
            return Subject(provider: provider, logout: { provider.clearToken() }, fetches: fetches, tokens: tokens)
        case .caching:
            let provider = CachingAuthorizationProvider(wrapping: FetchingProvider(fetch: fetch), clock: clock)
            return Subject(provider: provider, logout: { await provider.identityDidChange() }, fetches: fetches, tokens: tokens)
        case .idToken:
            let provider = try IDTokenStore(authorizedDomains: ["api.example.com"], options: .init(refreshTimeout: 600, timeoutBehavior: .fail),
                                            clock: clock, diagnostics: sink)
            provider.registerTokenRefresh { await fetch() }
            return Subject(provider: provider, logout: { provider.clearIDToken() }, fetches: fetches, tokens: tokens)
        case .tokenExchange:
            // The signer is the refresh that counts and waits; the platform numbers its tokens alike.
            let exchanges = Counter()
            let platform = RecordingTransport { _ in
                let number = exchanges.increment()
                let token = "auth-\(number)"
                tokens.withLock { $0[number] = token }
                return ServerResponse(statusCode: 200, body: Data(#"{"auth_token":"\#(token)","expires_in":600}"#.utf8))
            }
            let provider = try TokenExchangeProvider(
                exchangeURL: URL(string: "https://platform.example.com/ccai/exchange")!,
                signer: .async { [clock] _ in
                    if fetches.increment() >= holdingFrom { await hold?.wait() }
                    let now = clock.now().timeIntervalSince1970
                    return makeJWT(["iat": now, "exp": now + 300])
                },
                transport: platform, options: .init(signingTimeout: 600, exchangeTimeout: 600), clock: clock, diagnostics: sink)
            return Subject(provider: provider, logout: { provider.clearUserData() }, fetches: fetches, tokens: tokens)
        }
    }

    func authorizer(_ provider: any AuthorizationProvider, deadline: TimeInterval = 60, window: AuthorizationOptions.RefreshWindow = AuthorizationOptions.RefreshWindow()) throws -> RequestAuthorizer {
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(host: "api.example.com", scheme: .bearer))
        return try RequestAuthorizer(policy: policy, providers: [.bearer: provider],
                                     options: AuthorizationOptions(refreshWindow: window, requestDeadline: deadline), clock: clock, diagnostics: sink)
    }

    func client(_ provider: any AuthorizationProvider, transport: RecordingTransport, deadline: TimeInterval = 60,
                window: AuthorizationOptions.RefreshWindow = AuthorizationOptions.RefreshWindow()) throws -> AuthorizedHTTPClient {
        AuthorizedHTTPClient(authorizer: try authorizer(provider, deadline: deadline, window: window), transport: transport)
    }

    func start(_ client: AuthorizedHTTPClient) -> Task<Result<ServerResponse, RequestError>, Never> {
        Task { [url] () -> Result<ServerResponse, RequestError> in
            do throws(RequestError) { return .success(try await client.send(OutgoingRequest(method: "GET", url: url))) } catch { return .failure(error) }
        }
    }

    // MARK: Logout wins over a 401 in flight

    @Test(arguments: Kind.allCases, [false, true])
    func aRequestRejectedAfterALogoutFailsAsClearedWithoutARefreshOrASecondSend(_ kind: Kind, decorated: Bool) async throws {
        let subject = try subject(kind)
        let provider: any AuthorizationProvider = decorated ? CountingForwardingDecorator(subject.provider) : subject.provider
        let held = AsyncGate(), arrived = Counter()
        let api = RecordingTransport { _ in
            _ = arrived.increment()
            await held.wait()
            return ServerResponse(statusCode: 401)
        }
        let request = start(try client(provider, transport: api))
        await eventually("the request reached the server", { arrived.current == 1 })
        await subject.logout()
        held.open()
        guard case .failure(let error) = await request.value else { Issue.record("the request succeeded"); return }
        #expect(error.code == .credentialCleared)
        #expect(error.wasSent)
        #expect(api.requests.map(subject.fetchNumber) == [1], "sent once, never with a token fetched after the logout")
        #expect(subject.fetches.current == 1, "nothing refreshed for it")
        // The next request, after the logout, fetches a token as usual.
        let next = start(try client(provider, transport: RecordingTransport()))
        if case .failure(let error) = await next.value { Issue.record("the next request failed: \(error.code)") }
        #expect(subject.fetches.current == 2)
    }

    @Test(arguments: Kind.allCases, [false, true])
    func aRetryGrantedBeforeALogoutIsNeverAuthorizedWithATokenFetchedAfterIt(_ kind: Kind, decorated: Bool) async throws {
        let subject = try subject(kind)
        let authorizer = try authorizer(decorated ? CountingForwardingDecorator(subject.provider) : subject.provider)
        let first = try await authorizer.authorize(OutgoingRequest(method: "GET", url: url))
        #expect(subject.fetchNumber(of: first.request) == 1)
        // The 401 is evaluated (a retry is granted), then the user logs out before the retry is authorized.
        #expect(await authorizer.evaluate(ServerResponse(statusCode: 401), to: first) == .retry)
        await subject.logout()
        do {
            let retry = try await authorizer.authorize(retrying: first)
            Issue.record("the retry was authorized after the logout, with token \(subject.fetchNumber(of: retry.request) ?? 0)")
        } catch {
            #expect(error.code == .credentialCleared)
        }
        #expect(subject.fetches.current == 1, "nothing refreshed for it after the logout")
    }

    // MARK: The refresh window bounds every refresh

    /// Four requests in a row that the server rejects whatever token they carry: what each ended
    /// with, which fetch's token each send carried, and how many fetches ran.
    func rejectEveryToken(_ kind: Kind, decorated: Bool) async throws -> (codes: [RequestError.Code?], sent: [Int?], fetches: Int) {
        let subject = try subject(kind)
        let api = RecordingTransport(statusCode: 401)
        let client = try client(decorated ? CountingForwardingDecorator(subject.provider) : subject.provider, transport: api,
                                window: AuthorizationOptions.RefreshWindow(maximumRefreshes: 2, interval: 30))
        var codes: [RequestError.Code?] = []
        for _ in 0..<4 {
            if case .failure(let error) = await start(client).value { codes.append(error.code) } else { codes.append(nil) }
        }
        return (codes, api.requests.map(subject.fetchNumber), subject.fetches.current)
    }

    @Test(arguments: Kind.allCases)
    func theRefreshWindowBoundsEveryRefreshThroughADecoratorAsItDoesDirectly(_ kind: Kind) async throws {
        let direct = try await rejectEveryToken(kind, decorated: false)
        let decorated = try await rejectEveryToken(kind, decorated: true)
        #expect(decorated.codes == direct.codes)
        #expect(decorated.sent == direct.sent)
        #expect(decorated.fetches == direct.fetches)
        #expect(decorated.codes.last == .refreshWindowExceeded)
        if kind != .caching {
            // The cache's own provider counts nothing: its refreshes are the retries the window grants.
            #expect(decorated.fetches <= 2, "every refresh counts in the window, the first one too")
        }
    }

    // MARK: One refresh for many waiters

    @Test(arguments: Kind.allCases)
    func fiftyRequestsRejectedWithOneStaleTokenShareOneRefreshThroughADecorator(_ kind: Kind) async throws {
        let refresh = AsyncGate()   // holds the refresh that replaces token 1
        let subject = try subject(kind, hold: refresh, holdingFrom: 2)
        let decorator = CountingForwardingDecorator(subject.provider)
        let arrived = Counter()
        let rejecting = Locked(false)
        let answer = AsyncGate()   // the server answers the fifty requests carrying token 1 once all have come
        let api = RecordingTransport { [subject] request in
            guard rejecting.withLock({ $0 }), subject.fetchNumber(of: request) == 1 else { return ServerResponse(statusCode: 200) }
            _ = arrived.increment()
            await answer.wait()
            return ServerResponse(statusCode: 401)
        }
        let client = try client(decorator, transport: api)
        if case .failure(let error) = await start(client).value { Issue.record("the first request failed: \(error.code)") }
        #expect(subject.fetches.current == 1)
        rejecting.withLock { $0 = true }
        let requests = (0..<50).map { _ in start(client) }
        await eventually("all fifty reached the server with token 1", { arrived.current == 50 })
        answer.open()
        // Every one was rejected and asked again (1 + 50 + 50 calls) before the refresh answers.
        await eventually("all fifty asked for the token that replaces token 1", { decorator.credentialCalls.current == 101 })
        refresh.open()
        for request in requests {
            if case .failure(let error) = await request.value { Issue.record("a request failed: \(error.code)") }
        }
        #expect(decorator.rejections.current == 50)
        #expect(subject.fetches.current == 2, "one refresh for the fifty")
        #expect(api.requests.filter { subject.fetchNumber(of: $0) == 2 }.count == 50)
    }

    // MARK: A request's deadline ends its wait

    @Test(arguments: Kind.allCases)
    func aWaitForARefreshThatNeverAnswersEndsAtTheRequestsDeadlineThroughADecorator(_ kind: Kind) async throws {
        let server = AsyncGate()   // a token server that does not answer
        defer { server.open() }
        let subject = try subject(kind, hold: server)
        let api = RecordingTransport()
        let client = try client(CountingForwardingDecorator(subject.provider), transport: api, deadline: 5)
        let ended = Locked(false)
        let request = Task { () -> Result<ServerResponse, RequestError> in
            defer { ended.withLock { $0 = true } }
            return await start(client).value
        }
        await eventually("the refresh started", { subject.fetches.current == 1 })
        clock.advance(by: 4.9)
        for _ in 0..<1_000 { await Task.yield() }
        #expect(!ended.withLock { $0 }, "still waiting before the deadline")
        clock.advance(by: 0.1)
        await eventually("the request ended at its deadline", { ended.withLock { $0 } })
        guard ended.withLock({ $0 }) else { await subject.logout(); return }   // ends the wait, so the test ends
        guard case .failure(let error) = await request.value else { Issue.record("the request got a token"); return }
        #expect(error.code == .deadlineExceeded)
        #expect(api.requests.isEmpty)
    }
}
