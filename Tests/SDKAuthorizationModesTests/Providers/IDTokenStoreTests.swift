import Foundation
import SDKAuthorizationModeKit
import SDKAuthorizationTesting
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationEngagement
@testable import SDKAuthorizationIDToken


@Suite("Async refresh-callback mode (ID token store)", .hangLimit)
struct IDTokenStoreTests {
    let clock = ManualClock()
    let sink = RecordingDiagnosticsSink()
    let callbacks = Counter()
    let context = AuthorizationContext(endpoint: "ticketing", url: URL(string: "https://api.rover.io/ticketing")!)

    func store(_ options: IDTokenStore.Options = .init(), domains: [String] = ["*.rover.io"]) throws -> IDTokenStore {
        let store = try IDTokenStore(authorizedDomains: domains, options: options, clock: clock, diagnostics: sink)
        let callbacks = callbacks
        store.registerRefreshCallback { _ = callbacks.increment() }
        return store
    }

    @Test func aTokenWithoutAReadableExpiryIsReportedOnceAndStillSent() async throws {
        // Rover: setIDToken("not-a-jwt") is accepted, but without `exp` nothing refreshes it ahead of time.
        let idTokens = try store()
        try idTokens.setIDToken("not-a-jwt")
        try idTokens.setIDToken("still-not-a-jwt")
        let noExpiry = sink.messages(at: .warning).filter { $0.contains("has no readable expiry") }
        #expect(noExpiry.count == 1)
        #expect(noExpiry.allSatisfy { !$0.contains("not-a-jwt") })
        #expect(try await idTokens.credential(for: context) == .bearer("still-not-a-jwt"))
    }

    @Test func aJWTWithAnExpiryIsNotReportedAsHavingNone() throws {
        let idTokens = try store()
        try idTokens.setIDToken(makeJWT(["exp": clock.now().timeIntervalSince1970 + 3_600]))
        #expect(!sink.messages(at: .warning).contains { $0.contains("has no readable expiry") })
    }

    func token(expiresIn seconds: TimeInterval, subject: String = "user-1") -> String {
        makeJWT(["sub": subject, "exp": clock.now().timeIntervalSince1970 + seconds])
    }

    /// Starts `count` waiting requests and returns once all of them wait.
    func startWaiters(_ count: Int, on store: IDTokenStore) async -> [Task<Credential, any Error>] {
        let before = store.waitingRequestCount
        let tasks = (0..<count).map { _ in Task { [context] in try await store.credential(for: context) } }
        await eventually("\(count) waiters", { store.waitingRequestCount == before + count })
        await clock.waitForSleepers(count: 1) // the store's one timeout driver
        return tasks
    }

    @Test(arguments: [1, 2, 1_000])
    func concurrentWaitersShareExactlyOneCallback(waiters: Int) async throws {
        let store = try store()
        let tasks = await startWaiters(waiters, on: store)
        await eventually("callback", { callbacks.current == 1 })
        let fresh = token(expiresIn: 3600)
        try store.setIDToken(fresh)
        for task in tasks { #expect(try await task.value == .bearer(fresh)) }
        #expect(callbacks.current == 1)
        #expect(store.heldWaitRecords == 0)
    }

    @Test func tokenReturningCallbackSetsTheTokenForEveryWaiter() async throws {
        let store = try IDTokenStore(authorizedDomains: ["*.rover.io"], clock: clock, diagnostics: sink)
        let fresh = token(expiresIn: 3600)
        let calls = Counter()
        let release = AsyncGate()
        store.registerTokenRefresh {
            _ = calls.increment()
            await release.wait()
            return fresh
        }
        let tasks = await startWaiters(20, on: store)
        release.open()
        for task in tasks { #expect(try await task.value == .bearer(fresh)) }
        #expect(calls.current == 1)
        #expect(store.currentToken == fresh)
    }

    @Test func tokenRefreshThatThrowsEndsEveryWaitAtOnceWithItsError() async throws {
        struct RefreshDenied: Error, Equatable {}
        let store = try IDTokenStore(authorizedDomains: ["*.rover.io"], clock: clock, diagnostics: sink)
        let release = AsyncGate()
        store.registerTokenRefresh {
            await release.wait()
            throw RefreshDenied()
        }
        let tasks = await startWaiters(3, on: store)
        release.open()
        for task in tasks {
            do {
                _ = try await task.value
                Issue.record("a waiter got a token")
            } catch let error as RequestError {
                #expect(error.code == .refreshFailed)
                #expect(error.underlyingError as? RefreshDenied == RefreshDenied())
                #expect(error.endpoint == "ticketing")
            }
        }
        #expect(clock.monotonicNow() == 1_000)              // no time passed: nobody sat out the timeout
        #expect(store.heldWaitRecords == 0)
        #expect(sink.messages(at: .warning).contains { $0.contains("The ID token refresh failed (RefreshDenied); 3 waiting requests fail") })
    }

    @Test func tokenRefreshReturningAnUnsendableTokenFailsTheWaitersAndKeepsTheOldToken() async throws {
        let store = try IDTokenStore(authorizedDomains: ["*.rover.io"], clock: clock, diagnostics: sink)
        let stale = token(expiresIn: 10)
        try store.setIDToken(stale)
        store.registerTokenRefresh { "bad\r\ntoken" }
        await #expect(throws: RequestError.refreshFailed(ConfigurationError.credentialContainsControlCharacters(field: "ID token"), endpoint: "ticketing")) {
            try await store.credential(for: context)
        }
        #expect(store.currentToken == stale)
    }

    @Test func settingTheWallClockBackDoesNotStretchAWait() async throws {
        let store = try store(.init(refreshTimeout: 2, timeoutBehavior: .fail))
        let tasks = await startWaiters(1, on: store)
        clock.setWallClock(to: clock.now().addingTimeInterval(-3600))
        clock.advance(by: 2)
        await #expect(throws: RequestError.credentialTimedOut(endpoint: "ticketing", after: 2)) { try await tasks[0].value }
    }

    @Test func freshTokenIsUsedWithoutWaitingOrCallback() async throws {
        let store = try store()
        let fresh = token(expiresIn: 61)
        try store.setIDToken(fresh)
        #expect(try await store.credential(for: context) == .bearer(fresh))
        #expect(callbacks.current == 0)
    }

    @Test func timeoutAtExactlyTheLimitSendsWithoutTokenAndLogsTheStableLine() async throws {
        let store = try store()
        let tasks = await startWaiters(3, on: store)
        clock.advance(by: 9.999)
        #expect(store.waitingRequestCount == 3)
        clock.advance(by: 0.001)
        for task in tasks { #expect(try await task.value == .omitted) }
        #expect(IDTokenStore.timeoutMessage(after: 10) == "setIDToken was not called within 10 seconds")
        #expect(sink.messages(at: .warning).filter { $0 == "setIDToken was not called within 10 seconds; sending ticketing without the ID token" }.count == 3)
        #expect(store.heldWaitRecords == 0)
    }

    @Test func strictTimeoutFailsAtExactlyTheConfiguredLimit() async throws {
        let store = try store(.init(refreshTimeout: 2.5, timeoutBehavior: .fail))
        let tasks = await startWaiters(2, on: store)
        clock.advance(by: 2.499)
        #expect(store.waitingRequestCount == 2)
        clock.advance(by: 0.001)
        for task in tasks {
            await #expect(throws: RequestError.credentialTimedOut(endpoint: "ticketing", after: 2.5)) { try await task.value }
        }
        #expect(sink.messages(at: .warning) == Array(repeating: "setIDToken was not called within 2.5 seconds; failing ticketing", count: 2))
    }

    @Test func waitsThatBeganAtDifferentTimesEachTimeOutAtTheirOwnDeadline() async throws {
        let store = try store(.init(timeoutBehavior: .fail))
        let early = await startWaiters(1, on: store)
        clock.advance(by: 4)
        let late = await startWaiters(1, on: store)
        clock.advance(by: 6)                       // early: 10 s, late: 6 s
        await #expect(throws: RequestError.self) { try await early[0].value }
        #expect(store.waitingRequestCount == 1)
        clock.advance(by: 3.999)
        #expect(store.waitingRequestCount == 1)
        clock.advance(by: 0.001)                   // late: 10 s
        await #expect(throws: RequestError.self) { try await late[0].value }
        await eventually("driver stopped", { store.heldWaitRecords == 0 && clock.sleeperCount == 0 })
        #expect(callbacks.current == 1)            // the second wait joined the first refresh
    }

    @Test func tokenArrivingAt9999MillisecondsIsInTime() async throws {
        let store = try store()
        let tasks = await startWaiters(1, on: store)
        clock.advance(by: 9.999)
        let fresh = token(expiresIn: 3600)
        try store.setIDToken(fresh)
        #expect(try await tasks[0].value == .bearer(fresh))
    }

    @Test func tokenArrivingAtTenSecondsIsTooLate() async throws {
        let store = try store(.init(timeoutBehavior: .fail))
        let tasks = await startWaiters(1, on: store)
        clock.advance(by: 10)
        try store.setIDToken(token(expiresIn: 3600))
        await #expect(throws: RequestError.credentialTimedOut(endpoint: "ticketing", after: 10)) { try await tasks[0].value }
    }

    @Test func staleTokenSetBeforeTheWaitDoesNotSatisfyIt() async throws {
        let store = try store()
        try store.setIDToken(token(expiresIn: -5))          // expired, buffered before the wait
        let tasks = await startWaiters(1, on: store)
        #expect(store.waitingRequestCount == 1)
        try store.setIDToken(token(expiresIn: 59))          // still stale (< 60 s), but new: serves the wait
        let fresh = try await tasks[0].value
        #expect(fresh != .omitted)
        // The next request does not accept the stale token either: it waits for a fresh one.
        let next = await startWaiters(1, on: store)
        let newest = token(expiresIn: 3600)
        try store.setIDToken(newest)
        #expect(try await next[0].value == .bearer(newest))
        #expect(callbacks.current == 2)
    }

    @Test func tokenWithUnreadableExpiryIsKept() async throws {
        let store = try store()
        try store.setIDToken("opaque-token-without-claims")
        #expect(try await store.credential(for: context) == .bearer("opaque-token-without-claims"))
        try store.setIDToken(makeJWT(["sub": "u1", "exp": "tomorrow"]))
        #expect(try await store.credential(for: context) != .omitted)
        #expect(callbacks.current == 0)
    }

    @Test func cancellingOneWaiterReleasesOnlyThatOne() async throws {
        let store = try store()
        let tasks = await startWaiters(3, on: store)
        tasks[1].cancel()
        await #expect(throws: CancellationError.self) { try await tasks[1].value }
        #expect(store.waitingRequestCount == 2)
        let fresh = token(expiresIn: 3600)
        try store.setIDToken(fresh)
        #expect(try await tasks[0].value == .bearer(fresh))
        #expect(try await tasks[2].value == .bearer(fresh))
        #expect(store.heldWaitRecords == 0)
        #expect(clock.sleeperCount == 0)
    }

    @Test func clearDuringWaitFailsTheWaitersPromptly() async throws {
        let store = try store()
        let tasks = await startWaiters(2, on: store)
        store.clearIDToken()
        for task in tasks {
            await #expect(throws: RequestError.credentialCleared(endpoint: "ticketing")) { try await task.value }
        }
        #expect(store.heldWaitRecords == 0)
        #expect(clock.sleeperCount == 0)
    }

    @Test func hostsOutsideTheAuthorizedDomainsNeverSeeTheToken() async throws {
        let store = try store()
        try store.setIDToken(token(expiresIn: 3600))
        for url in ["https://evilrover.io/x", "https://rover.io.evil.com/x", "https://rover.io/x", "https://example.com/x"] {
            let context = AuthorizationContext(endpoint: "x", url: URL(string: url)!)
            #expect(try await store.credential(for: context) == .omitted, "\(url)")
        }
        #expect(callbacks.current == 0)
    }

    @Test func requestMatchingTwoPatternsWaitsOnce() async throws {
        let store = try store(domains: ["*.rover.io", "api.rover.io"])
        let tasks = await startWaiters(1, on: store)
        #expect(clock.sleeperCount == 1)
        try store.setIDToken(token(expiresIn: 3600))
        _ = try await tasks[0].value
        #expect(callbacks.current == 1)
    }

    @Test func synchronousCallbackFormIsInvokedOnce() async throws {
        let store = try IDTokenStore(authorizedDomains: ["api.rover.io"], clock: clock, diagnostics: sink)
        let calls = Counter()
        store.registerRefreshCallback(synchronous: { _ = calls.increment() })
        let tasks = await startWaiters(5, on: store)
        await eventually("sync callback", { calls.current == 1 })
        try store.setIDToken("t")
        for task in tasks { _ = try await task.value }
        #expect(calls.current == 1)
    }

    @Test func missingCallbackIsReportedAndTheWaitStillEndsOnSet() async throws {
        let store = try IDTokenStore(authorizedDomains: ["api.rover.io"], clock: clock, diagnostics: sink)
        let tasks = await startWaiters(1, on: store)
        #expect(sink.messages(at: .warning) == ["A request needs an ID token but no refresh callback is registered; waiting for setIDToken"])
        try store.setIDToken("t")
        #expect(try await tasks[0].value == .bearer("t"))
    }

    @Test func badTokensAreRefusedAndTheCurrentOneIsKept() throws {
        let store = try store()
        try store.setIDToken("good")
        #expect(throws: ConfigurationError.emptyCredential(field: "ID token")) { try store.setIDToken("") }
        #expect(throws: ConfigurationError.credentialContainsControlCharacters(field: "ID token")) { try store.setIDToken("a\r\nb") }
        #expect(store.currentToken == "good")
    }

    @Test func badOptionsAndPatternsAreRefused() {
        for options in [IDTokenStore.Options(refreshTimeout: -1), .init(refreshTimeout: .nan), .init(staleLeeway: -0.5)] {
            #expect(throws: ConfigurationError.self) { try IDTokenStore(authorizedDomains: ["a.example"], options: options) }
        }
        #expect(throws: ConfigurationError.self) { try IDTokenStore(authorizedDomains: [String]()) }
        #expect(throws: ConfigurationError.self) { try IDTokenStore(authorizedDomains: [AuthorizedDomain]()) }
    }

    @Test(arguments: [
        ("*.rover.io", "api.rover.io", true), ("*.rover.io", "a.b.rover.io", true), ("*.rover.io", "API.Rover.IO", true),
        ("*.rover.io", "api.rover.io.", true), ("*.rover.io", "rover.io", false), ("*.rover.io", "evilrover.io", false),
        ("*.rover.io", "rover.io.evil.com", false), ("*.rover.io", "api-rover.io", false),
        ("api.rover.io", "api.rover.io", true), ("api.rover.io", "x.api.rover.io", false), ("API.rover.io", "api.rover.io", true),
        ("127.0.0.1", "127.0.0.1", true), ("[::1]", "::1", true),
    ])
    func domainPatternsMatchExactlyTheHostsTheyName(pattern: String, host: String, matches: Bool) throws {
        #expect(try AuthorizedDomain(pattern).matches(host) == matches)
    }

    @Test(arguments: ["", "*", "*.", "**.rover.io", "api.*.io", "rover.*", "http://api.rover.io", "ftp://api.rover.io", "api.rover.io:0", "*.rover.io:", "api.rover.io/path", "api rover.io", ".rover.io", "a..b"])
    func malformedDomainPatternsAreRefused(pattern: String) {
        #expect(throws: ConfigurationError.self) { try AuthorizedDomain(pattern) }
    }
}

@Suite("Refresh-callback mode through the client", .hangLimit)
struct IDTokenStoreClientTests {
    @Test func unauthorizedResponseTriggersOneRefreshAndOneRetryNotALoop() async throws {
        let clock = ManualClock()
        let store = try IDTokenStore(authorizedDomains: ["api.example.com"], clock: clock, diagnostics: RecordingDiagnosticsSink())
        let refreshes = Counter()
        let second = makeJWT(["sub": "u1", "exp": clock.now().timeIntervalSince1970 + 3600, "n": 2])
        store.registerRefreshCallback {
            _ = refreshes.increment()
            try? store.setIDToken(second)
        }
        let first = makeJWT(["sub": "u1", "exp": clock.now().timeIntervalSince1970 + 3600, "n": 1])
        try store.setIDToken(first)

        let transport = RecordingTransport(statusCode: 401)
        let registry = ProviderRegistry()
        registry.register(name: "rover", provider: store)
        var policy = AuthorizationPolicy()
        try policy.add(Endpoint("ticketing", method: "GET", path: "/rover/ticketing"), scheme: .bearer)
        let client = try AuthorizedHTTPClient(
            configuration: AuthorizationConfiguration(projectToken: "p", baseURL: "https://api.example.com", authorization: nil,
                                                      advancedAuthEnabled: true, providerLookup: .implicitName("rover")),
            policy: policy, registry: registry, transport: transport, diagnostics: RecordingDiagnosticsSink(), clock: clock
        )
        await #expect(throws: RequestError.authorizationRejected(status: 401, scheme: .bearer, body: Data("{}".utf8), endpoint: "ticketing")) {
            try await client.send("ticketing")
        }
        #expect(transport.requests.map { $0.value(forHeader: "Authorization") } == ["Bearer \(first)", "Bearer \(second)"])
        #expect(refreshes.current == 1)

        // With a server that accepts the refreshed token, the retry succeeds.
        transport.clear()
        try store.setIDToken(first)
        transport.enqueue(.response(ServerResponse(statusCode: 401)), .response(ServerResponse(statusCode: 200)))
        #expect(try await client.send("ticketing").statusCode == 200)
        #expect(transport.requests.count == 2)
    }

    @Test func cancelledRequestWaitingForATokenFailsAsCancelledAndSendsNothing() async throws {
        let clock = ManualClock()
        let store = try IDTokenStore(authorizedDomains: ["api.example.com"], clock: clock, diagnostics: RecordingDiagnosticsSink())
        let registry = ProviderRegistry()
        registry.register(name: "rover", provider: store)
        var policy = AuthorizationPolicy()
        try policy.add(Endpoint("ticketing", method: "GET", path: "/rover/ticketing"), scheme: .bearer)
        let transport = RecordingTransport()
        let client = try AuthorizedHTTPClient(
            configuration: AuthorizationConfiguration(projectToken: "p", baseURL: "https://api.example.com", authorization: nil,
                                                      advancedAuthEnabled: true, providerLookup: .implicitName("rover")),
            policy: policy, registry: registry, transport: transport, diagnostics: RecordingDiagnosticsSink(), clock: clock
        )
        let request = Task { try await client.send("ticketing") }
        await eventually("waiting", { store.waitingRequestCount == 1 })
        request.cancel()
        await #expect(throws: RequestError.cancelled) { try await request.value }
        #expect(transport.requests.isEmpty)
    }

    @Test func endpointOnAnUnauthorizedHostIsSentWithoutTheToken() async throws {
        let store = try IDTokenStore(authorizedDomains: ["*.rover.io"], clock: ManualClock(), diagnostics: RecordingDiagnosticsSink())
        try store.setIDToken("id-token")
        let registry = ProviderRegistry()
        registry.register(name: "rover", provider: store)
        var policy = AuthorizationPolicy()
        try policy.add(Endpoint("ticketing", method: "GET", path: "/ticketing"), scheme: .bearer)
        try policy.add(Endpoint("partner", method: "GET", path: "https://evilrover.io/collect"), scheme: .bearer)
        let transport = RecordingTransport()
        let client = try AuthorizedHTTPClient(
            configuration: AuthorizationConfiguration(projectToken: "p", baseURL: "https://api.rover.io", authorization: nil,
                                                      advancedAuthEnabled: true, providerLookup: .implicitName("rover")),
            policy: policy, registry: registry, transport: transport, diagnostics: RecordingDiagnosticsSink()
        )
        _ = try await client.send("ticketing")
        _ = try await client.send("partner")
        #expect(transport.requests.map(\.url.host) == ["api.rover.io", "evilrover.io"])
        #expect(transport.requests.map { $0.value(forHeader: "Authorization") } == ["Bearer id-token", nil])
    }

    @Test func builtInNameRefusesAnHTTPBaseURLThatIsNotLoopback() throws {
        let configuration = try AuthorizationConfiguration(
            data: Data(#"{"projectToken": "p", "baseURL": "http://api.example.com", "advancedAuthEnabled": true, "providerName": "SDKAuthorization.IDTokenRefresh"}"#.utf8),
            format: .json
        )
        #expect(throws: ConfigurationError.invalidValue(key: "authorizedDomains", reason: "'http://api.example.com' uses http, which is allowed only on a loopback host (localhost, 127.0.0.0/8, [::1]); use https")) {
            try AuthorizedHTTPClient(configuration: configuration, policy: AuthorizationPolicy(), registry: registry(), transport: RecordingTransport(),
                                     diagnostics: RecordingDiagnosticsSink())
        }
    }

    /// The app's registry: the refresh-callback mode registered with a callback that returns `token`.
    private func registry(token: String = "id-token") -> ProviderRegistry {
        let registry = ProviderRegistry()
        registry.register(IDTokenRefreshMode(tokenRefresh: { token }))
        return registry
    }

    @Test func builtInNameChoosesTheRefreshModeForTheBaseURLOrigin() async throws {
        let clock = ManualClock()
        var policy = AuthorizationPolicy()
        try policy.add(Endpoint("ticketing", method: "GET", path: "/rover/ticketing"), scheme: .bearer)
        let transport = RecordingTransport()
        let configuration = try AuthorizationConfiguration(
            data: Data(#"{"projectToken": "p", "baseURL": "http://127.0.0.1:8080", "advancedAuthEnabled": true, "providerName": "SDKAuthorization.IDTokenRefresh"}"#.utf8),
            format: .json
        )
        let client = try AuthorizedHTTPClient(configuration: configuration, policy: policy, registry: registry(), transport: transport,
                                              diagnostics: RecordingDiagnosticsSink(), clock: clock)
        let store = try #require(client.provider as? IDTokenStore)
        #expect(store.authorizedDomains.map(\.description) == ["http://127.0.0.1:8080"])
        // No token set: the callback registered with the mode fetches it, no downcast needed.
        _ = try await client.send("ticketing")
        #expect(transport.requests.first?.value(forHeader: "Authorization") == "Bearer id-token")
        // The same host on another port or scheme is another origin: no token.
        #expect(try await store.credential(for: AuthorizationContext(endpoint: "x", url: #require(URL(string: "http://127.0.0.1:8081/x")))) == .omitted)
        #expect(try await store.credential(for: AuthorizationContext(endpoint: "x", url: #require(URL(string: "https://127.0.0.1:8080/x")))) == .omitted)
    }
}
