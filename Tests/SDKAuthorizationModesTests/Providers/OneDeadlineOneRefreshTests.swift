import Foundation
import SDKAuthorizationTesting
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationModeKit
@testable import SDKAuthorizationEngagement
@testable import SDKAuthorizationIDToken
@testable import SDKAuthorizationTokenExchange

/// The guarantees every built-in provider now shares through the one refresh primitive and the
/// request's deadline: waits end at the deadline or at cancellation, a hung refresh does not wedge
/// later requests, a logout wins over a late refresh, and a burst of rejections causes one refresh.
@Suite("One deadline and one refresh for every built-in provider", .serialized, .hangLimit)
struct OneDeadlineOneRefreshTests {
    let clock = ManualClock()
    let sink = RecordingDiagnosticsSink()
    let exchangeURL = URL(string: "https://platform.example.com/ccai/exchange")!
    let chats = URL(string: "https://platform.example.com/ccai/chats")!

    /// A client whose requests to platform.example.com carry the provider's bearer credential and
    /// must be done within `deadline` seconds.
    func client(_ provider: any AuthorizationProvider, transport: RecordingTransport = RecordingTransport(), deadline: TimeInterval = 1) throws -> AuthorizedHTTPClient {
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(host: "platform.example.com", scheme: .bearer))
        policy.add(try AuthorizationRule(host: "api.rover.io", scheme: .bearer))
        let authorizer = try RequestAuthorizer(policy: policy, providers: [.bearer: provider], options: AuthorizationOptions(requestDeadline: deadline),
                                               clock: clock, diagnostics: sink)
        return AuthorizedHTTPClient(authorizer: authorizer, transport: transport)
    }

    func signed(_ payload: SigningPayload) -> String {
        makeJWT(["iat": clock.now().timeIntervalSince1970, "exp": clock.now().timeIntervalSince1970 + 300, "identifier": "user-7"],
                header: ["alg": "HS256", "typ": "JWT"])
    }

    func exchangeProvider(_ signer: PayloadSigner, platform: RecordingTransport) throws -> TokenExchangeProvider {
        try TokenExchangeProvider(exchangeURL: exchangeURL, signer: signer, transport: platform, clock: clock, diagnostics: sink)
    }

    func answered(_ count: Int) -> ServerResponse {
        ServerResponse(statusCode: 200, body: Data(#"{"auth_token":"auth-token-\#(count)","expires_in":600}"#.utf8))
    }

    /// Starts `client.send` and reports when it has ended.
    func start(_ client: AuthorizedHTTPClient, _ url: URL) -> (Task<Result<ServerResponse, RequestError>, Never>, Locked<Bool>) {
        let ended = Locked(false)
        let task = Task { () -> Result<ServerResponse, RequestError> in
            defer { ended.withLock { $0 = true } }
            do throws(RequestError) { return .success(try await client.send(OutgoingRequest(method: "GET", url: url))) } catch { return .failure(error) }
        }
        return (task, ended)
    }

    /// Gives every task that can run a chance to, then says whether `ended` is still false.
    func stillRunning(_ ended: Locked<Bool>) async -> Bool {
        for _ in 0..<2_000 { await Task.yield() }
        return !ended.withLock { $0 }
    }

    // MARK: A hung signer or exchange

    @Test func aSignerThatNeverAnswersEndsAOneSecondRequestAtOneSecondAndTheNextRequestStillWorks() async throws {
        let calls = Counter()
        let exchange = try exchangeProvider(.completion { payload, completion in
            // The first call is never answered; later ones are.
            if calls.increment() > 1 { completion(.success(signed(payload))) }
        }, platform: RecordingTransport { _ in answered(1) })
        let api = RecordingTransport()
        let client = try client(exchange, transport: api)
        let (first, ended) = start(client, chats)
        await eventually("the signer was asked", { calls.current == 1 })
        clock.advance(by: 0.999)
        #expect(await stillRunning(ended))
        clock.advance(by: 0.001)
        guard case .failure(let error) = await first.value else { Issue.record("the first request succeeded"); return }
        #expect(error.code == .deadlineExceeded)
        #expect(api.requests.isEmpty)

        let second = try await client.send(OutgoingRequest(method: "GET", url: chats))
        #expect(second.statusCode == 200)
        #expect(calls.current == 2)
        #expect(api.requests.last?.value(forHeader: "Authorization") == "Bearer auth-token-1")
    }

    @Test func anExchangeThatNeverAnswersEndsAOneSecondRequestAtOneSecondAndTheNextRequestStillWorks() async throws {
        let exchanges = Counter()
        let platform = RecordingTransport { _ in
            let count = exchanges.increment()
            if count == 1 { try await Task.sleep(nanoseconds: 3_600_000_000_000) }   // never answers, until cancelled
            return answered(count)
        }
        let exchange = try exchangeProvider(.async { payload in signed(payload) }, platform: platform)
        let api = RecordingTransport()
        let client = try client(exchange, transport: api)
        let (first, ended) = start(client, chats)
        await eventually("the exchange was sent", { exchanges.current == 1 })
        clock.advance(by: 0.999)
        #expect(await stillRunning(ended))
        clock.advance(by: 0.001)
        guard case .failure(let error) = await first.value else { Issue.record("the first request succeeded"); return }
        #expect(error.code == .deadlineExceeded)

        let second = try await client.send(OutgoingRequest(method: "GET", url: chats))
        #expect(second.statusCode == 200)
        #expect(api.requests.map { $0.value(forHeader: "Authorization") } == ["Bearer auth-token-2"])
    }

    // MARK: Every built-in wait ends at the deadline, or at once on cancellation

    enum Waiting: String, CaseIterable, Sendable {
        case idTokenStore, tokenExchange, cache, refreshingToken, providerClass
    }

    /// A provider of the kind that waits for something that never comes, and how to tell it waits.
    func waitingProvider(_ kind: Waiting) throws -> (any AuthorizationProvider, @Sendable () -> Bool) {
        switch kind {
        case .idTokenStore:
            let store = try IDTokenStore(authorizedDomains: ["platform.example.com"], options: .init(refreshTimeout: 600), clock: clock, diagnostics: sink)
            store.registerRefreshCallback {}
            return (store, { store.waitingRequestCount == 1 })
        case .tokenExchange:
            let asked = Counter()
            let exchange = try exchangeProvider(.completion { _, _ in _ = asked.increment() }, platform: RecordingTransport())
            return (exchange, { asked.current == 1 })
        case .cache:
            let hung = NeverAnsweringProvider()
            return (CachingAuthorizationProvider(wrapping: hung, clock: clock), { hung.contexts.withLock { $0.count } == 1 })
        case .refreshingToken:
            let asked = Counter()
            let provider = try RefreshingTokenProvider(options: .init(refreshTimeout: 600), clock: clock, diagnostics: sink) {
                _ = asked.increment()
                try await Task.sleep(nanoseconds: 3_600_000_000_000)
                return .init("late")
            }
            return (provider, { asked.current == 1 })
        case .providerClass:
            let provider = CustomerTokenProvider(type: HeldAuthProvider.self, clock: clock, diagnostics: sink)
            return (provider, { HeldAuthProvider.entered.withLock { $0 } >= 1 })
        }
    }

    @Test(arguments: Waiting.allCases)
    func aBuiltInWaitEndsAtTheDeadlineInItsContextWithNoClientAroundIt(_ kind: Waiting) async throws {
        HeldAuthProvider.reset()
        defer { HeldAuthProvider.release() }
        let (provider, isWaiting) = try waitingProvider(kind)
        let context = AuthorizationContext(endpoint: "chats", url: chats, deadline: RequestDeadline(seconds: 1, from: clock))
        let ended = Locked(false)
        let task = Task { () -> (any Error)? in
            defer { ended.withLock { $0 = true } }
            do { _ = try await provider.credential(for: context); return nil } catch { return error }
        }
        await eventually("\(kind) waits", isWaiting)
        clock.advance(by: 0.999)
        #expect(await stillRunning(ended))
        clock.advance(by: 0.001)
        let error = await task.value
        #expect((error as? RequestError)?.code == .deadlineExceeded, "\(kind): \(String(describing: error))")
    }

    @Test(arguments: Waiting.allCases)
    func aCancelledCallerReturnsAtOnceBehindEachBuiltInProvider(_ kind: Waiting) async throws {
        HeldAuthProvider.reset()
        defer { HeldAuthProvider.release() }
        let (provider, isWaiting) = try waitingProvider(kind)
        let client = try client(provider, deadline: 600)
        let (task, _) = start(client, chats)
        await eventually("\(kind) waits", isWaiting)
        task.cancel()
        guard case .failure(let error) = await task.value else { Issue.record("\(kind): succeeded"); return }
        #expect(error.code == .cancelled, "\(kind): \(error.code)")
        // The clock never moved: nothing but the cancellation ended the wait.
    }

    // MARK: Logout wins

    @Test func aRefreshThatCompletesAfterClearIDTokenIsNeitherInstalledNorStored() async throws {
        let saved = MemoryCredentialStore()
        let store = try IDTokenStore(authorizedDomains: ["api.rover.io"], clock: clock, diagnostics: sink, credentialStore: saved, credentialIdentity: "previous-user")
        let gate = AsyncGate()
        let refreshing = Counter()
        store.registerTokenRefresh { [clock] in
            _ = refreshing.increment()
            await gate.wait()
            return makeJWT(["sub": "previous-user", "exp": clock.now().timeIntervalSince1970 + 3_600])
        }
        let waiting = Task { [context = AuthorizationContext(endpoint: "ticketing", url: URL(string: "https://api.rover.io/ticketing")!)] in
            try await store.credential(for: context)
        }
        await eventually("the refresh runs", { refreshing.current == 1 })
        store.clearIDToken()
        await #expect(throws: RequestError.credentialCleared(endpoint: "ticketing")) { try await waiting.value }
        gate.open()
        await eventually("the late token was dropped", { sink.messages(at: .info).contains { $0.contains("returned after a logout") } })
        #expect(store.currentToken == nil)
        #expect(saved.stored.withLock { $0.isEmpty })
    }

    @Test func aTokenExchangedAfterClearUserDataIsNeitherUsedNorStored() async throws {
        let saved = MemoryCredentialStore()
        let gate = AsyncGate()
        let exchanges = Counter(), answeredExchanges = Counter()
        // The signer answers at once; the platform holds the exchange until the test opens the gate,
        // so the exchange is on its way when the logout comes.
        let platform = RecordingTransport { [self] _ in
            let count = exchanges.increment()
            await gate.wait()
            defer { _ = answeredExchanges.increment() }
            return answered(count)
        }
        let exchange = try TokenExchangeProvider(exchangeURL: exchangeURL, signer: .async { [self] payload in signed(payload) },
                                                 identity: "previous-user", store: saved, transport: platform, clock: clock, diagnostics: sink)
        let waiting = Task { [context = AuthorizationContext(endpoint: "chats", url: chats)] in try await exchange.credential(for: context) }
        await eventually("the exchange reaches the platform", { exchanges.current == 1 })
        exchange.clearUserData()
        await #expect(throws: RequestError.credentialCleared(endpoint: "chats")) { try await waiting.value }
        gate.open()
        await eventually("the platform answers the exchange", { answeredExchanges.current == 1 })
        for _ in 0..<2_000 { await Task.yield() }
        #expect(platform.requests.count == 1, "exactly one exchange, answered after the logout")
        #expect(exchange.currentToken == nil)
        #expect(saved.stored.withLock { $0.isEmpty })
    }

    // MARK: Many rejections, one refresh

    @Test func fiftyConcurrentRequestsRejectedWithOneStaleTokenCauseOneRefreshAndAllSucceed() async throws {
        let store = try IDTokenStore(authorizedDomains: ["api.rover.io"], clock: clock, diagnostics: sink)
        let fresh = makeJWT(["sub": "user", "exp": clock.now().timeIntervalSince1970 + 3_600, "n": 2])
        try store.setIDToken(makeJWT(["sub": "user", "exp": clock.now().timeIntervalSince1970 + 3_600, "n": 1]))
        let refreshes = Counter()
        store.registerTokenRefresh {
            _ = refreshes.increment()
            return fresh
        }
        // The server has revoked the first token (its exp still looks fine). All 50 requests reach
        // it with the stale token before the first rejection comes back.
        let arrived = Counter()
        let everyoneSent = AsyncGate()
        let api = RecordingTransport { request in
            if request.value(forHeader: "Authorization") == "Bearer \(fresh)" { return ServerResponse(statusCode: 200) }
            if arrived.increment() == 50 { everyoneSent.open() }
            await everyoneSent.wait()
            return ServerResponse(statusCode: 401)
        }
        let client = try client(store, transport: api, deadline: 60)
        let statuses = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<50 {
                group.addTask {
                    do throws(RequestError) { return try await client.send(OutgoingRequest(method: "GET", url: URL(string: "https://api.rover.io/ticketing")!)).statusCode }
                    catch { return error.statusCode ?? -1 }
                }
            }
            return await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses == Array(repeating: 200, count: 50))
        #expect(refreshes.current == 1)
        #expect(arrived.current == 50)
        #expect(!sink.messages(at: .warning).contains { $0.contains("refreshes within") })
    }
}

/// A provider class that blocks inside its call until the test releases it.
final class HeldAuthProvider: NSObject, AuthorizationProviderType {
    static let entered = Locked(0)
    /// A new gate per test: permits a test's release leaves behind never open the next test's.
    static let gate = Locked(DispatchSemaphore(value: 0))

    static func reset() {
        gate.withLock { $0 = DispatchSemaphore(value: 0) }
        entered.withLock { $0 = 0 }
    }

    /// Lets the calls blocked on this test's gate go.
    static func release() {
        let gate = gate.withLock { $0 }
        for _ in 0..<8 { gate.signal() }
    }

    required override init() {}

    func getAuthorizationToken() -> String? {
        let gate = Self.gate.withLock { $0 }
        Self.entered.withLock { $0 += 1 }
        _ = gate.wait(timeout: .now() + 150)   // only an anti-hang bound: generous for a loaded machine
        return "held"
    }
}
