import Foundation
import SDKAuthorizationTesting
import EngagementTestSupport
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationEngagement
@testable import SDKAuthorizationIDToken

@Suite("Authorization events", .hangLimit)
struct AuthorizationEventTests {
    let clock = ManualClock()
    let sink = RecordingDiagnosticsSink()
    let events = RecordingEventObserver()
    static let secret = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzZWNyZXQtdXNlciJ9.c2VjcmV0LXNpZ25hdHVyZQ"
    static let apiKey = "super-secret-api-key-0123456789"

    func bearerAuthorizer(_ provider: ScriptedProvider, options: AuthorizationOptions = AuthorizationOptions()) throws -> RequestAuthorizer {
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(host: "api.example.com", scheme: .bearer))
        try policy.add(Endpoint("inbox", method: "GET", path: "/inbox"), scheme: .bearer)
        return try RequestAuthorizer(policy: policy, providers: [.bearer: provider], baseURL: URL(string: "https://api.example.com"),
                                     options: options, clock: clock, diagnostics: sink, observer: events)
    }

    func idTokenStore(_ options: IDTokenStore.Options = .init()) throws -> IDTokenStore {
        try IDTokenStore(authorizedDomains: ["*.rover.io"], options: options, clock: clock, diagnostics: sink, observer: events)
    }

    func jwt(expiresIn seconds: TimeInterval) -> String {
        makeJWT(["sub": "secret-user", "exp": clock.now().timeIntervalSince1970 + seconds])
    }

    let ticketing = AuthorizationContext(endpoint: "ticketing", url: URL(string: "https://api.rover.io/ticketing")!)

    // MARK: The seam

    @Test func anAcceptedRequestReportsOneAuthorizationWithItsSchemeEndpointAndAttempt() async throws {
        let client = try AuthorizedHTTPClient(configuration: engagementConfiguration(authorization: "Token \(Self.apiKey)"),
                                              transport: RecordingTransport(), diagnostics: sink, clock: clock, observer: events)
        _ = try await client.send(.trackEvents, body: Data("{}".utf8))
        #expect(events.events == [AuthorizationEvent(.requestAuthorized, scheme: .apiKey, endpoint: .trackEvents, attempt: 1)])
    }

    @Test func aRequestNoRuleMatchesIsReportedAsAuthorizedWithSchemeNone() async throws {
        let authorizer = try bearerAuthorizer(ScriptedProvider(.token(Self.secret)))
        _ = try await authorizer.authorize(OutgoingRequest(method: "GET", url: URL(string: "https://elsewhere.example.org/x")!))
        #expect(events.events == [AuthorizationEvent(.requestAuthorized, scheme: AuthorizationScheme.none, attempt: 1)])
    }

    @Test func a401ThatTheProviderRetriesReportsTheRejectionTheRetryAndTheSecondAuthorization() async throws {
        let provider = ScriptedProvider(.token(Self.secret), .token(Self.secret + "x"))
        provider.rejectionDecision = .retry
        let transport = RecordingTransport()
        transport.enqueue(.response(ServerResponse(statusCode: 401)))
        let client = AuthorizedHTTPClient(authorizer: try bearerAuthorizer(provider), transport: transport)
        _ = try await client.send("inbox")
        #expect(events.events == [
            AuthorizationEvent(.requestAuthorized, scheme: .bearer, endpoint: "inbox", attempt: 1),
            AuthorizationEvent(.credentialRejected, scheme: .bearer, endpoint: "inbox", status: 401),
            AuthorizationEvent(.retryScheduled, scheme: .bearer, endpoint: "inbox", status: 401, duration: 0),
            AuthorizationEvent(.requestAuthorized, scheme: .bearer, endpoint: "inbox", attempt: 2),
        ])
    }

    @Test func aRetryAfterADelayReportsTheDelay() async throws {
        let provider = ScriptedProvider(.token(Self.secret))
        provider.rejectionDecision = .retryAfter(2.5)
        let authorizer = try bearerAuthorizer(provider)
        let authorized = try await authorizer.authorize(OutgoingRequest(method: "GET", url: URL(string: "https://api.example.com/inbox")!))
        #expect(await authorizer.evaluate(ServerResponse(statusCode: 401), to: authorized) == .retryAfter(2.5))
        #expect(events.events(.retryScheduled).map(\.duration) == [2.5])
    }

    @Test func aRejectionThatFailsReportsNoRetry() async throws {
        let authorizer = try bearerAuthorizer(ScriptedProvider(.token(Self.secret)))   // decides .fail
        let authorized = try await authorizer.authorize(OutgoingRequest(method: "GET", url: URL(string: "https://api.example.com/inbox")!))
        _ = await authorizer.evaluate(ServerResponse(statusCode: 403), to: authorized)
        #expect(events.kinds == [.requestAuthorized, .credentialRejected])
        #expect(events.events(.credentialRejected).first?.status == 403)
    }

    @Test func theRefreshWindowTripIsReportedWithItsSchemeAndStatus() async throws {
        let provider = ScriptedProvider(.token(Self.secret + "1"), .token(Self.secret + "2"), .token(Self.secret + "3"))
        provider.rejectionDecision = .retry
        let authorizer = try bearerAuthorizer(provider, options: AuthorizationOptions(refreshWindow: AuthorizationOptions.RefreshWindow(maximumRefreshes: 1, interval: 30)))
        let client = AuthorizedHTTPClient(authorizer: authorizer, transport: RecordingTransport(statusCode: 401))
        for _ in 0..<2 { _ = try? await client.send("inbox") }
        #expect(events.events(.retryScheduled).count == 1)
        #expect(events.events(.refreshWindowExceeded) == [AuthorizationEvent(.refreshWindowExceeded, scheme: .bearer, endpoint: "inbox", status: 401)])
        #expect(sink.diagnostics.contains { $0.event == "refreshWindowExceeded" && $0.endpoint == "inbox" && $0.scheme == .bearer })
    }

    @Test func aRedirectToAnotherOriginReportsTheDroppedCredentialOnce() async throws {
        let transport = RecordingTransport()
        transport.enqueue(
            .response(ServerResponse(statusCode: 302, headers: ["Location": "https://cdn.example.net/a"])),
            .response(ServerResponse(statusCode: 302, headers: ["Location": "https://cdn.example.net/b"]))
        )
        let client = AuthorizedHTTPClient(authorizer: try bearerAuthorizer(ScriptedProvider(.token(Self.secret))), transport: transport)
        _ = try await client.send("inbox")
        #expect(events.events(.redirectCredentialDropped) == [AuthorizationEvent(.redirectCredentialDropped, scheme: .bearer, endpoint: "inbox", status: 302)])
    }

    @Test func diagnosticsOfARejectionCarryTheEndpointSchemeAndEventAsFields() async throws {
        let authorizer = try bearerAuthorizer(ScriptedProvider(.token(Self.secret)))
        let authorized = try await authorizer.authorize(OutgoingRequest(method: "GET", url: URL(string: "https://api.example.com/inbox")!), endpoint: "inbox")
        _ = await authorizer.evaluate(ServerResponse(statusCode: 401), to: authorized)
        let warning = try #require(sink.diagnostics.first { $0.level == .warning })
        #expect(warning.endpoint == "inbox")
        #expect(warning.scheme == .bearer)
        #expect(warning.event == "credentialRejected")
    }

    @Test func diagnosticsOfAProviderFailureNameTheErrorCodeAsTheEvent() async throws {
        struct Offline: Error {}
        let authorizer = try bearerAuthorizer(ScriptedProvider(.failure(Offline())))
        _ = try? await authorizer.authorize(OutgoingRequest(method: "GET", url: URL(string: "https://api.example.com/inbox")!))
        let error = try #require(sink.diagnostics.first { $0.level == .error })
        #expect(error.event == "providerFailed")
        #expect(error.endpoint == "inbox")
    }

    // MARK: The ID token store

    @Test func waitersReportOneRefreshAndEachWaitWithItsDurationOnTheClock() async throws {
        let store = try idTokenStore()
        store.registerRefreshCallback {}
        let tasks = (0..<3).map { _ in Task { [ticketing] in try await store.credential(for: ticketing) } }
        await eventually("3 waiters", { store.waitingRequestCount == 3 })
        clock.advance(by: 2)
        try store.setIDToken(jwt(expiresIn: 3600))
        for task in tasks { _ = try await task.value }
        #expect(events.events(.refreshStarted).count == 1)
        #expect(events.events(.refreshFinished) == [AuthorizationEvent(.refreshFinished, duration: 2, outcome: .succeeded)])
        #expect(events.events(.waitStarted) == Array(repeating: AuthorizationEvent(.waitStarted, endpoint: "ticketing"), count: 3))
        #expect(events.events(.waitEnded) == Array(repeating: AuthorizationEvent(.waitEnded, endpoint: "ticketing", duration: 2, outcome: .succeeded), count: 3))
    }

    @Test func aRefreshThatRunsOutOfTimeFinishesAsTimedOutAndTheNextOneStartsAfresh() async throws {
        let store = try idTokenStore()
        let first = Task { [ticketing] in try await store.credential(for: ticketing) }
        await eventually("waiter", { store.waitingRequestCount == 1 })
        await clock.waitForSleepers(count: 1)
        clock.advance(by: 10)
        #expect(try await first.value == .omitted)
        #expect(events.events(.refreshFinished) == [AuthorizationEvent(.refreshFinished, duration: 10, outcome: .timedOut)])
        #expect(events.events(.waitEnded) == [AuthorizationEvent(.waitEnded, endpoint: "ticketing", duration: 10, outcome: .timedOut)])
        #expect(sink.diagnostics.contains { $0.event == "waitEnded" && $0.endpoint == "ticketing" })

        let second = Task { [ticketing] in try await store.credential(for: ticketing) }
        await eventually("second waiter", { store.waitingRequestCount == 1 })
        try store.setIDToken(jwt(expiresIn: 3600))
        _ = try await second.value
        #expect(events.kinds.filter { $0 == .refreshStarted || $0 == .refreshFinished } == [.refreshStarted, .refreshFinished, .refreshStarted, .refreshFinished])
        #expect(events.events(.refreshFinished).last?.outcome == .succeeded)
    }

    @Test func aFailingRefreshCallbackFinishesTheRefreshAndTheWaitsAsFailed() async throws {
        struct Denied: Error {}
        let store = try idTokenStore()
        store.registerTokenRefresh { throw Denied() }
        await #expect(throws: RequestError.self) { try await store.credential(for: ticketing) }
        #expect(events.events(.refreshFinished).map(\.outcome) == [.failed])
        #expect(events.events(.waitEnded).map(\.outcome) == [.failed])
    }

    @Test func logoutDuringARefreshFinishesItAsCleared() async throws {
        let store = try idTokenStore()
        let task = Task { [ticketing] in try await store.credential(for: ticketing) }
        await eventually("waiter", { store.waitingRequestCount == 1 })
        store.clearIDToken()
        await #expect(throws: RequestError.self) { try await task.value }
        #expect(events.events(.refreshFinished).map(\.outcome) == [.cleared])
        #expect(events.events(.waitEnded).map(\.outcome) == [.cleared])
    }

    @Test func aCancelledWaitEndsAsCancelledAndLeavesTheRefreshRunning() async throws {
        let store = try idTokenStore()
        let task = Task { [ticketing] in try await store.credential(for: ticketing) }
        await eventually("waiter", { store.waitingRequestCount == 1 })
        task.cancel()
        _ = try? await task.value
        #expect(events.events(.waitEnded).map(\.outcome) == [.cancelled])
        #expect(events.events(.refreshFinished).isEmpty)
    }

    @Test func aFreshTokenIsUsedWithoutAnyWaitOrRefreshEvent() async throws {
        let store = try idTokenStore()
        try store.setIDToken(jwt(expiresIn: 3600))
        _ = try await store.credential(for: ticketing)
        #expect(events.events.isEmpty)
    }

    @Test func theRegisteredIDTokenModeLoadedByNameReportsToTheClientsObserver() async throws {
        let configuration = try AuthorizationConfiguration(
            projectToken: "p", baseURL: "https://api.rover.io", authorization: nil, advancedAuthEnabled: true,
            providerLookup: .implicitName(BuiltInProviderName.idTokenRefresh)
        )
        var policy = AuthorizationPolicy()
        try policy.add(Endpoint("ticketing", method: "GET", path: "/ticketing"), scheme: .bearer)
        let registry = ProviderRegistry()
        registry.register(IDTokenRefreshMode(refresh: nil))
        let client = try AuthorizedHTTPClient(configuration: configuration, policy: policy, registry: registry, transport: RecordingTransport(),
                                              diagnostics: sink, clock: clock, observer: events)
        let store = try #require(client.provider as? IDTokenStore)
        let send = Task { try await client.send("ticketing") }
        await eventually("waiter", { store.waitingRequestCount == 1 })
        try store.setIDToken(jwt(expiresIn: 3600))
        _ = try await send.value
        #expect(events.kinds == [.waitStarted, .refreshStarted, .refreshFinished, .waitEnded, .requestAuthorized]
            || events.kinds == [.waitStarted, .refreshStarted, .waitEnded, .refreshFinished, .requestAuthorized])
    }

    // MARK: Secrets

    @Test func noEventOrDiagnosticShowsATokenOrKeyInItsDescriptionDumpOrMirror() async throws {
        // Every kind of event, made by real scenarios with secret credentials.
        let provider = ScriptedProvider(.token(Self.secret), .token(Self.secret + "2"))
        provider.rejectionDecision = .retry
        let transport = RecordingTransport()
        transport.enqueue(.response(ServerResponse(statusCode: 401, headers: ["WWW-Authenticate": "Bearer \(Self.secret)"], body: Data(Self.secret.utf8))),
                          .response(ServerResponse(statusCode: 302, headers: ["Location": "https://cdn.example.net/?token=\(Self.secret)"])))
        let client = AuthorizedHTTPClient(authorizer: try bearerAuthorizer(provider, options: AuthorizationOptions(refreshWindow: AuthorizationOptions.RefreshWindow(maximumRefreshes: 1))),
                                          transport: transport)
        _ = try? await client.send("inbox")
        transport.enqueue(.response(ServerResponse(statusCode: 401)))
        _ = try? await client.send("inbox")
        let apiKeyClient = try AuthorizedHTTPClient(configuration: engagementConfiguration(authorization: "Token \(Self.apiKey)"),
                                                    transport: RecordingTransport(), diagnostics: sink, clock: clock, observer: events)
        _ = try await apiKeyClient.send(.trackEvents)
        let store = try idTokenStore()
        store.registerTokenRefresh { [clock] in makeJWT(["sub": "secret-user", "exp": clock.now().timeIntervalSince1970 + 3600]) }
        _ = try await store.credential(for: ticketing)
        _ = try await store.credential(for: ticketing)

        let kinds = Set(events.kinds)
        #expect(kinds == [.requestAuthorized, .credentialRejected, .retryScheduled, .refreshWindowExceeded, .redirectCredentialDropped,
                          .refreshStarted, .refreshFinished, .waitStarted, .waitEnded])
        let token = try #require(store.currentToken)
        for event in events.events {
            var dumped = ""
            dump(event, to: &dumped)
            for text in [event.description, String(reflecting: event), dumped] {
                for secret in [Self.secret, Self.apiKey, token, "secret-user"] { #expect(!text.contains(secret), "\(event.kind)") }
            }
        }
        for diagnostic in sink.diagnostics {
            var dumped = ""
            dump(diagnostic, to: &dumped)
            for secret in [Self.secret, Self.apiKey, token] { #expect(!dumped.contains(secret)) }
        }
    }
}

@Suite("Several event observers", .hangLimit)
struct MultiplexEventObserverTests {
    @Test func everyObserverIsToldEveryEventInOrder() {
        let first = RecordingEventObserver()
        let second = RecordingEventObserver()
        let both = MultiplexEventObserver([first, second])
        both.observe(AuthorizationEvent(.refreshStarted))
        both.observe(AuthorizationEvent(.refreshFinished, duration: 1, outcome: .succeeded))
        #expect(first.kinds == [.refreshStarted, .refreshFinished])
        #expect(second.events == first.events)
    }
}
