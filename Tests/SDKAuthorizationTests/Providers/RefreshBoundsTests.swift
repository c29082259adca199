import Foundation
import SDKAuthorizationTesting
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationModeKit

/// What bounds the refreshes of the core's refreshing providers: one at a time, even when an
/// abandoned one ignores cancellation; none for a request that a logout overtook; and no more than
/// the refresh window allows, whatever starts them.
@Suite("Refreshes are bounded: one at a time, none after a logout, the window's number at most", .hangLimit)
struct RefreshBoundsTests {
    let clock = ManualClock()
    let sink = RecordingDiagnosticsSink()
    let url = URL(string: "https://api.example.com/v1/me")!

    func client(_ provider: any AuthorizationProvider, transport: RecordingTransport, deadline: TimeInterval = 60,
                window: AuthorizationOptions.RefreshWindow = AuthorizationOptions.RefreshWindow()) throws -> AuthorizedHTTPClient {
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(host: "api.example.com", scheme: .bearer))
        let authorizer = try RequestAuthorizer(policy: policy, providers: [.bearer: provider],
                                               options: AuthorizationOptions(refreshWindow: window, requestDeadline: deadline),
                                               clock: clock, diagnostics: sink)
        return AuthorizedHTTPClient(authorizer: authorizer, transport: transport)
    }

    /// A server that answers 401 to every request, once `held` opens; `arrived` counts the requests
    /// that reached it.
    func heldUnauthorizedServer() -> (api: RecordingTransport, held: AsyncGate, arrived: Counter) {
        let held = AsyncGate()
        let arrived = Counter()
        let api = RecordingTransport { _ in
            _ = arrived.increment()
            await held.wait()
            return ServerResponse(statusCode: 401)
        }
        return (api, held, arrived)
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

    // MARK: One refresh at a time

    /// Counts the refreshes running at once, and the most ever.
    final class Concurrency: Sendable {
        private let counts = Locked((now: 0, most: 0))
        func enter() { counts.withLock { $0.now += 1; $0.most = max($0.most, $0.now) } }
        func leave() { counts.withLock { $0.now -= 1 } }
        var most: Int { counts.withLock { $0.most } }
    }

    @Test func anAbandonedRefreshThatIgnoresCancellationIsTheOnlyOneRunningAcrossTwentyRequests() async throws {
        let running = Concurrency()
        let server = AsyncGate()   // a token server that does not answer, and a call that ignores cancellation
        let refreshes = Counter()
        let provider = try RefreshingTokenProvider(options: .init(refreshTimeout: 600), clock: clock, diagnostics: sink) {
            _ = refreshes.increment()
            running.enter()
            await server.wait()
            running.leave()
            return .init("late-token")
        }
        let api = RecordingTransport()
        let client = try client(provider, transport: api, deadline: 1)
        for _ in 0..<20 {
            let request = start(client)
            await eventually("the request waits", { provider.description.contains("waiting: 1") })
            clock.advance(by: 1)
            guard case .failure(let error) = await request.value else { Issue.record("a request got a token"); break }
            #expect(error.code == .deadlineExceeded)
        }
        #expect(running.most == 1)
        #expect(refreshes.current == 1)
        // When it answers at last, its token serves the next request without another refresh.
        server.open()
        await eventually("the refresh ended", { running.most == 1 && provider.description.contains("token: set") })
        _ = try await client.send(OutgoingRequest(method: "GET", url: url))
        #expect(refreshes.current == 1)
        #expect(api.requests.map { $0.value(forHeader: "Authorization") } == ["Bearer late-token"])
    }

    /// A wrapped provider whose call ignores cancellation and answers only when the gate opens.
    final class GatedProvider: AuthorizationProvider, Sendable {
        let gate = AsyncGate()
        let running = Concurrency()
        let calls = Counter()
        let token: String
        init(token: String) { self.token = token }
        func credential(for context: AuthorizationContext) async throws -> Credential {
            _ = calls.increment()
            running.enter()
            await gate.wait()
            running.leave()
            return .bearer(token)
        }
    }

    @Test func anAbandonedCallOfTheCacheIsTheOnlyOneRunningAcrossTwentyRequests() async throws {
        let wrapped = GatedProvider(token: makeJWT(["exp": clock.now().timeIntervalSince1970 + 3_600]))
        let cache = CachingAuthorizationProvider(wrapping: wrapped, clock: clock)
        let client = try client(cache, transport: RecordingTransport(), deadline: 1)
        for _ in 0..<20 {
            let request = start(client)
            await eventually("the request waits", { wrapped.calls.current == 1 && clock.sleeperCount > 0 })
            clock.advance(by: 1)
            guard case .failure(let error) = await request.value else { Issue.record("a request got a token"); break }
            #expect(error.code == .deadlineExceeded)
        }
        #expect(wrapped.running.most == 1)
        #expect(wrapped.calls.current == 1)
        wrapped.gate.open()
    }

    // MARK: Logout wins against a rejection in flight

    @Test func aRequestRejectedAfterALogoutFailsAsClearedAtItsEvaluationWithoutARefreshOrASecondSend() async throws {
        let refreshes = Counter()
        let provider = try RefreshingTokenProvider(token: .init("a0"), clock: clock, diagnostics: sink) { .init("a\(refreshes.increment())") }
        let (api, held, arrived) = heldUnauthorizedServer()
        let request = start(try client(provider, transport: api))
        await eventually("the request reached the server", { arrived.current == 1 })
        provider.clearToken()
        held.open()
        guard case .failure(let error) = await request.value else { Issue.record("the request succeeded"); return }
        #expect(error.code == .credentialCleared)
        #expect(error.wasSent)
        // Which check stopped it: the evaluation's (it fails with the 401 it saw and says so), not
        // the retry's or the provider's, which would also stop it had the evaluation let it through.
        #expect(error.response?.statusCode == 401)
        #expect(sink.messages(at: .info).contains { $0.contains("after a logout; it fails as cleared, without a refresh or a retry") })
        #expect(api.requests.map { $0.value(forHeader: "Authorization") } == ["Bearer a0"])
        #expect(refreshes.current == 0)
    }

    @Test func aRequestRejectedAfterTheCachesIdentityChangeFailsAsClearedWithoutAskingAgain() async throws {
        let token = makeJWT(["exp": clock.now().timeIntervalSince1970 + 3_600, "n": 0])
        let wrapped = ScriptedProvider(.token(token), .token("after-logout"))
        wrapped.rejectionDecision = .retry
        let cache = CachingAuthorizationProvider(wrapping: wrapped, clock: clock)
        let (api, held, arrived) = heldUnauthorizedServer()
        let request = start(try client(cache, transport: api))
        await eventually("the request reached the server", { arrived.current == 1 })
        await cache.identityDidChange()
        held.open()
        guard case .failure(let error) = await request.value else { Issue.record("the request succeeded"); return }
        #expect(error.code == .credentialCleared)
        #expect(api.requests.map { $0.value(forHeader: "Authorization") } == ["Bearer \(token)"])
        #expect(wrapped.requestedContexts.count == 1)
    }

    // MARK: The refresh window counts every refresh

    @Test(arguments: [1, 2])
    func theRefreshWindowCapsTheRefreshCallbackWhenTheServerRejectsEveryToken(_ maximum: Int) async throws {
        let refreshes = Counter()
        let provider = try RefreshingTokenProvider(clock: clock, diagnostics: sink) { .init("a\(refreshes.increment())") }
        let api = RecordingTransport(statusCode: 401)
        let client = try client(provider, transport: api, window: AuthorizationOptions.RefreshWindow(maximumRefreshes: maximum, interval: 30))
        var codes: [RequestError.Code?] = []
        for _ in 0..<5 { codes.append(await send(client)) }
        #expect(refreshes.current == maximum)
        #expect(codes.last == .refreshWindowExceeded)
        #expect(codes.allSatisfy { $0 == .authorizationRejected || $0 == .refreshWindowExceeded })
        // Once the interval has passed, a refresh is allowed again.
        clock.advance(by: 30)
        _ = await send(client)
        #expect(refreshes.current > maximum && refreshes.current <= 2 * maximum)
    }

    @Test func oneProviderSharedByThreeClientsRefreshesNoMoreThanTheWindowAllowsWhenTheServerRejectsEveryToken() async throws {
        let refreshes = Counter()
        let provider = try RefreshingTokenProvider(clock: clock, diagnostics: sink) { .init("a\(refreshes.increment())") }
        let api = RecordingTransport(statusCode: 401)
        // Three clients (an SDK's three services, say), each with the default window: 5 refreshes in 30 s.
        let clients = try (0..<3).map { _ in try client(provider, transport: api) }
        var codes: [RequestError.Code?] = []
        for round in 0..<15 {
            codes.append(await send(clients[round % 3]))
            clock.advance(by: 1)
        }
        #expect(refreshes.current == 5, "the window bounds the provider's refreshes, not each client's")
        #expect(codes.suffix(10).allSatisfy { $0 == .refreshWindowExceeded })
        #expect(sink.messages(at: .warning).contains { $0.contains("its provider refreshed 5 times within 30.0 seconds (for every client that shares it)") })
        // Once the interval has passed, a refresh is allowed again.
        clock.advance(by: 30)
        _ = await send(clients[0])
        #expect(refreshes.current > 5, "refreshes resume once the interval has passed")
    }

    @Test func theRefreshWindowCountsARefreshForARejectedStartingToken() async throws {
        let refreshes = Counter()
        let provider = try RefreshingTokenProvider(token: .init("a0"), clock: clock, diagnostics: sink) { .init("a\(refreshes.increment())") }
        let api = RecordingTransport(statusCode: 401)
        let client = try client(provider, transport: api, window: AuthorizationOptions.RefreshWindow(maximumRefreshes: 2, interval: 30))
        var codes: [RequestError.Code?] = []
        for _ in 0..<4 { codes.append(await send(client)) }
        #expect(refreshes.current == 2)
        #expect(codes == [.authorizationRejected, .refreshWindowExceeded, .refreshWindowExceeded, .refreshWindowExceeded])
        // a0, its retry with a1; a2 once; then nothing is sent.
        #expect(api.requests.map { $0.value(forHeader: "Authorization") } == ["Bearer a0", "Bearer a1", "Bearer a2"])
    }

    @Test func aRefreshedTokenThatHasAlreadyExpiredFailsTheRequestsAndRefreshesNoMoreThanTheWindowAllows() async throws {
        let refreshes = Counter()
        let provider = try RefreshingTokenProvider(clock: clock, diagnostics: sink) { [clock] in
            .init("expired-\(refreshes.increment())", expiresAt: clock.now().addingTimeInterval(-1))
        }
        let api = RecordingTransport()
        let client = try client(provider, transport: api, window: AuthorizationOptions.RefreshWindow(maximumRefreshes: 2, interval: 30))
        var codes: [RequestError.Code?] = []
        for _ in 0..<5 { codes.append(await send(client)) }
        #expect(codes == [.refreshedCredentialExpired, .refreshedCredentialExpired, .refreshWindowExceeded, .refreshWindowExceeded, .refreshWindowExceeded])
        #expect(refreshes.current == 2)
        #expect(api.requests.isEmpty)
        #expect(sink.messages(at: .warning).contains { $0.contains("already expired") })
    }
}

@Suite("A wait bound to a generation (SingleFlight)", .hangLimit)
struct GenerationBoundWaitTests {
    @Test func aWaitForAnEarlierGenerationEndsClearedAndNeitherTakesTheNewValueNorStartsAFlight() async {
        let flight = SingleFlight<String>(clock: ManualClock(), value: "before-logout")
        let before = flight.generation
        flight.reset()
        let started = Counter()
        let join = SingleFlight<String>.Join.wait(start: { _ in _ = started.increment(); return nil })
        let ended = Locked(false)
        let wait = Task {
            defer { ended.withLock { $0 = true } }
            return await flight.value(deadline: nil, generation: before, isUsable: { _ in true }, join: join)
        }
        await eventually("a wait of an earlier generation ended at once", { ended.withLock { $0 } })
        flight.set("after-logout")   // ends it, should it still wait
        guard case .cleared = await wait.value else {
            Issue.record("a wait of an earlier generation did not end as cleared"); return
        }
        guard case .cleared = await flight.value(deadline: nil, generation: before, isUsable: { _ in true }, join: join) else {
            Issue.record("a wait of an earlier generation took the new generation's value"); return
        }
        #expect(started.current == 0)
        guard case .value("after-logout") = await flight.value(deadline: nil, generation: flight.generation, isUsable: { _ in true }, join: join) else {
            Issue.record("a wait of the current generation did not get its value"); return
        }
    }
}

@Suite("A refresh past its timeout that still runs is the only one", .hangLimit)
struct TimedOutRefreshTests {
    @Test func aRefreshPastItsTimeoutThatStillRunsFailsNewRequestsAtOnceWithoutStartingAnother() async throws {
        let clock = ManualClock()
        let server = AsyncGate()
        let refreshes = Counter()
        let provider = try RefreshingTokenProvider(options: .init(refreshTimeout: 10), clock: clock, diagnostics: RecordingDiagnosticsSink()) {
            _ = refreshes.increment()
            await server.wait()   // ignores cancellation
            return .init("late-token")
        }
        let context = AuthorizationContext(endpoint: "me", url: URL(string: "https://api.example.com/v1/me")!)
        let first = Task { try await provider.credential(for: context) }
        await eventually("waiting", { provider.description.contains("waiting: 1") })
        clock.advance(by: 10)
        await #expect(throws: RequestError.credentialTimedOut(endpoint: "me", after: 10)) { try await first.value }
        let ended = Locked(false)
        let later = Task { () -> (any Error)? in
            defer { ended.withLock { $0 = true } }
            do { _ = try await provider.credential(for: context); return nil } catch { return error }
        }
        await eventually("a request after the timeout failed at once", { ended.withLock { $0 } })
        #expect(refreshes.current == 1)
        server.open()
        #expect(await later.value as? RequestError == .credentialTimedOut(endpoint: "me", after: 10))
        await eventually("the late token was installed", { provider.description.contains("token: set") })
        #expect(try await provider.credential(for: context) == .bearer("late-token"))
        #expect(refreshes.current == 1)
    }
}

@Suite("Abandoned work that is still waited for (SingleFlight)", .hangLimit)
struct AbandonedWorkTests {
    @Test func requestsBehindAbandonedWorkThatFailsGetOneNewFlightAndItsValue() async {
        let clock = ManualClock()
        let flight = SingleFlight<String>(clock: clock, configuration: .init(abandonsUnwatchedFlights: true, waitsForAbandonedWork: true))
        let flights = Locked<[SingleFlight<String>.Flight]>([])
        let join = SingleFlight<String>.Join.wait(start: { started in flights.withLock { $0.append(started) }; return nil })
        let first = Task { await flight.value(deadline: RequestDeadline(seconds: 1, from: clock), isUsable: { _ in true }, join: join) }
        await eventually("the first flight started", { flights.withLock { $0.count } == 1 })
        clock.advance(by: 1)
        guard case .deadlineExceeded = await first.value else { Issue.record("the first wait did not end at its deadline"); return }
        // Its work still runs: the next request waits for it and starts nothing.
        let second = Task { await flight.value(deadline: nil, isUsable: { _ in true }, join: join) }
        await eventually("the second request waits", { flight.waitingCount == 1 })
        #expect(flights.withLock { $0.count } == 1)
        struct Failed: Error {}
        flight.finish(flights.withLock { $0[0] }, with: .failure(Failed()))
        await eventually("a new flight started for it", { flights.withLock { $0.count } == 2 })
        guard flights.withLock({ $0.count }) == 2 else {
            flight.reset()   // ends the wait, so the test ends
            return
        }
        flight.finish(flights.withLock { $0[1] }, with: .success("fresh"))
        guard case .value("fresh") = await second.value else { Issue.record("the waiting request did not get the new flight's value"); return }
    }
}
