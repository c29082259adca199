import Foundation
import Metrics
import MetricsTestKit
import SDKAuthorization
import SDKAuthorizationEngagement
import SDKAuthorizationIDToken
import SDKAuthorizationMetrics
import SDKAuthorizationTesting
import Testing

@Suite("swift-metrics event observer", .timeLimit(.minutes(3)))
struct MetricsEventObserverTests {
    let metrics = TestMetrics()

    @Test func eachRequestKindIsCountedPerScheme() throws {
        let observer = MetricsEventObserver(factory: metrics)
        observer.observe(AuthorizationEvent(.requestAuthorized, scheme: .bearer, endpoint: "inbox", attempt: 1))
        observer.observe(AuthorizationEvent(.requestAuthorized, scheme: .bearer, endpoint: "inbox", attempt: 2))
        observer.observe(AuthorizationEvent(.requestAuthorized, scheme: .apiKey, endpoint: .trackEvents, attempt: 1))
        observer.observe(AuthorizationEvent(.credentialRejected, scheme: .bearer, endpoint: "inbox", status: 401))
        observer.observe(AuthorizationEvent(.retryScheduled, scheme: .bearer, endpoint: "inbox", status: 401, duration: 0))
        observer.observe(AuthorizationEvent(.refreshWindowExceeded, scheme: .bearer, status: 401))
        observer.observe(AuthorizationEvent(.redirectCredentialDropped, scheme: .apiKey, status: 302))

        #expect(try metrics.expectCounter("sdkauth_requests_authorized_total", [("sdkauth.scheme", "bearer")]).totalValue == 2)
        #expect(try metrics.expectCounter("sdkauth_requests_authorized_total", [("sdkauth.scheme", "apiKey")]).totalValue == 1)
        #expect(try metrics.expectCounter("sdkauth_credential_rejections_total", [("sdkauth.scheme", "bearer"), ("http.response.status_code", "401")]).totalValue == 1)
        #expect(try metrics.expectCounter("sdkauth_retries_total", [("sdkauth.scheme", "bearer")]).totalValue == 1)
        #expect(try metrics.expectCounter("sdkauth_refresh_window_exceeded_total", [("sdkauth.scheme", "bearer")]).totalValue == 1)
        #expect(try metrics.expectCounter("sdkauth_redirect_credentials_dropped_total", [("sdkauth.scheme", "apiKey")]).totalValue == 1)
    }

    @Test func refreshesAndWaitsAreCountedAndTimedWithErrorTypeOnlyWhenTheyDidNotSucceed() throws {
        let observer = MetricsEventObserver(factory: metrics)
        observer.observe(AuthorizationEvent(.refreshStarted))
        observer.observe(AuthorizationEvent(.refreshFinished, duration: 1.5, outcome: .succeeded))
        observer.observe(AuthorizationEvent(.waitStarted, endpoint: "ticketing"))
        observer.observe(AuthorizationEvent(.waitEnded, endpoint: "ticketing", duration: 1.25, outcome: .succeeded))
        observer.observe(AuthorizationEvent(.waitEnded, endpoint: "ticketing", duration: 10, outcome: .timedOut))

        #expect(try metrics.expectCounter("sdkauth_refreshes_total", []).totalValue == 1)
        #expect(try metrics.expectTimer("sdkauth_refresh_duration", []).values == [1_500_000_000])
        #expect(try metrics.expectCounter("sdkauth_token_waits_total", []).totalValue == 1)
        #expect(try metrics.expectCounter("sdkauth_token_waits_total", [("error.type", "timedOut")]).totalValue == 1)
        #expect(try metrics.expectTimer("sdkauth_token_wait_duration", []).values == [1_250_000_000])
        #expect(try metrics.expectTimer("sdkauth_token_wait_duration", [("error.type", "timedOut")]).values == [10_000_000_000])
        #expect(metrics.counters.count == 3)   // nothing for the starts
        // Nanoseconds recorded, seconds preferred for display.
        #expect(try metrics.expectTimer("sdkauth_token_wait_duration", [("error.type", "timedOut")]).displayUnit == .seconds)
    }

    @Test func eachMetricCarriesOpenTelemetryDimensionNamesAndNoneOfTheOldOnes() throws {
        let observer = MetricsEventObserver(factory: metrics)
        observer.observe(AuthorizationEvent(.credentialRejected, scheme: .bearer, endpoint: "inbox", status: 403))
        observer.observe(AuthorizationEvent(.refreshFinished, duration: 1, outcome: .failed))
        let rejections = try metrics.expectCounter("sdkauth_credential_rejections_total", [("sdkauth.scheme", "bearer"), ("http.response.status_code", "403")])
        #expect(rejections.dimensions.map(\.0) == ["sdkauth.scheme", "http.response.status_code"])
        #expect(try metrics.expectCounter("sdkauth_refreshes_total", [("error.type", "failed")]).totalValue == 1)
        let names = Set(metrics.counters.flatMap { $0.dimensions.map(\.0) } + metrics.timers.flatMap { $0.dimensions.map(\.0) })
        #expect(names.isDisjoint(with: ["scheme", "status", "outcome"]))
    }

    @Test func anObserverMadeInsideWithMetricsFactoryRecordsToThatFactoryAfterTheScopeEnds() throws {
        let observer = withMetricsFactory(metrics) { MetricsEventObserver() }
        // The event comes later, from another task, outside the scope: the factory was captured.
        observer.observe(AuthorizationEvent(.requestAuthorized, scheme: .bearer, attempt: 1))
        observer.observe(AuthorizationEvent(.waitEnded, duration: 0.5, outcome: .succeeded))
        #expect(try metrics.expectCounter("sdkauth_requests_authorized_total", [("sdkauth.scheme", "bearer")]).totalValue == 1)
        #expect(try metrics.expectTimer("sdkauth_token_wait_duration", []).values == [500_000_000])
    }

    @Test func anExplicitFactoryWinsOverTheFactoryInScope() throws {
        let inScope = TestMetrics()
        let observer = withMetricsFactory(inScope) { MetricsEventObserver(factory: metrics) }
        observer.observe(AuthorizationEvent(.retryScheduled, scheme: .apiKey, status: 401))
        #expect(try metrics.expectCounter("sdkauth_retries_total", [("sdkauth.scheme", "apiKey")]).totalValue == 1)
        #expect(inScope.counters.isEmpty)
    }

    @Test func aPrefixNamesEveryMetric() throws {
        let observer = MetricsEventObserver(prefix: "mysdk_auth", factory: metrics)
        observer.observe(AuthorizationEvent(.requestAuthorized, scheme: .bearer, attempt: 1))
        #expect(try metrics.expectCounter("mysdk_auth_requests_authorized_total", [("sdkauth.scheme", "bearer")]).totalValue == 1)
    }

    @Test func aClientAndAnIDTokenStoreRecordTheExpectedCounts() async throws {
        let observer = MetricsEventObserver(factory: metrics)
        let clock = ManualClock()
        let store = try IDTokenStore(authorizedDomains: ["api.rover.io"], clock: clock, diagnostics: RecordingDiagnosticsSink(), observer: observer)
        store.registerRefreshCallback {}
        var policy = AuthorizationPolicy()
        try policy.add(Endpoint("ticketing", method: "GET", path: "/ticketing"), scheme: .bearer)
        let authorizer = try RequestAuthorizer(policy: policy, providers: [.bearer: store], baseURL: URL(string: "https://api.rover.io"),
                                               clock: clock, diagnostics: RecordingDiagnosticsSink(), observer: observer)
        let transport = RecordingTransport()
        transport.enqueue(.response(ServerResponse(statusCode: 401)))
        let client = AuthorizedHTTPClient(authorizer: authorizer, transport: transport)

        // Three requests wait for one refresh; one of them is rejected, refreshed and retried.
        let sends = (0..<3).map { _ in Task { try await client.send("ticketing") } }
        while store.waitingRequestCount < 3 { await Task.yield() }
        clock.advance(by: 2)
        try store.setIDToken("first.token.value")
        while store.waitingRequestCount < 1 { await Task.yield() }   // the rejected one waits again
        try store.setIDToken("second.token.value")
        for send in sends { _ = try await send.value }

        #expect(try metrics.expectCounter("sdkauth_requests_authorized_total", [("sdkauth.scheme", "bearer")]).totalValue == 4)
        #expect(try metrics.expectCounter("sdkauth_credential_rejections_total", [("sdkauth.scheme", "bearer"), ("http.response.status_code", "401")]).totalValue == 1)
        #expect(try metrics.expectCounter("sdkauth_retries_total", [("sdkauth.scheme", "bearer")]).totalValue == 1)
        #expect(try metrics.expectCounter("sdkauth_refreshes_total", []).totalValue == 2)
        #expect(try metrics.expectCounter("sdkauth_token_waits_total", []).totalValue == 4)
        // Three waits of 2 s and the retried request's second wait of 0 s, recorded in whatever order
        // the resumed requests run.
        #expect(try metrics.expectTimer("sdkauth_token_wait_duration", []).values.sorted() == [0, 2_000_000_000, 2_000_000_000, 2_000_000_000])
    }
}
