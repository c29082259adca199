import Foundation
import InMemoryTracing
import SDKAuthorization
import SDKAuthorizationIDToken
import SDKAuthorizationTesting
import SDKAuthorizationTracing
import Testing
import Tracing

@Suite("swift-distributed-tracing event observer", .timeLimit(.minutes(3)))
struct TracingEventObserverTests {
    let tracer = InMemoryTracer()

    @Test func aRefreshBecomesASpanThatLastsAsLongAsTheRefreshDid() throws {
        let observer = TracingEventObserver(tracer: tracer)
        observer.observe(AuthorizationEvent(.refreshStarted))
        observer.observe(AuthorizationEvent(.refreshFinished, duration: 2.5, outcome: .succeeded))
        let span = try #require(tracer.finishedSpans.first)
        #expect(tracer.finishedSpans.count == 1)
        #expect(span.operationName == "sdkauth.refresh")
        #expect(span.endInstant.nanosecondsSinceEpoch - span.startInstant.nanosecondsSinceEpoch == 2_500_000_000)
        #expect(span.attributes["error.type"] == nil)
        #expect(span.status == nil)
    }

    @Test func aTimedOutWaitIsAnErrorSpanUnderTheWaitingRequestsSpan() async throws {
        let observer = TracingEventObserver(tracer: tracer)
        let clock = ManualClock()
        let store = try IDTokenStore(authorizedDomains: ["api.rover.io"], options: .init(refreshTimeout: 10), clock: clock,
                                     diagnostics: RecordingDiagnosticsSink(), observer: observer)
        let context = AuthorizationContext(endpoint: "ticketing", url: URL(string: "https://api.rover.io/ticketing")!)
        let parent = tracer.startSpan("GET /ticketing")
        let wait = Task { [parent] in
            try await ServiceContext.withValue(parent.context) { try await store.credential(for: context) }
        }
        await clock.waitForSleepers(count: 1)
        clock.advance(by: 10)
        #expect(try await wait.value == .omitted)
        parent.end()

        let waitSpan = try #require(tracer.finishedSpans.first { $0.operationName == "sdkauth.token_wait" })
        #expect(waitSpan.parentSpanID == parent.spanContext.spanID)
        #expect(waitSpan.traceID == parent.spanContext.traceID)
        #expect(waitSpan.endInstant.nanosecondsSinceEpoch - waitSpan.startInstant.nanosecondsSinceEpoch == 10_000_000_000)
        #expect(waitSpan.status?.code == .error)
        #expect(waitSpan.attributes["sdkauth.endpoint"]?.toSpanAttribute() == "ticketing")
        #expect(waitSpan.attributes["error.type"]?.toSpanAttribute() == "timedOut")
        #expect(tracer.finishedSpans.contains { $0.operationName == "sdkauth.refresh" && $0.status?.code == .error })
    }

    @Test func aRejectionAndItsRetryAreEventsOnTheActiveSpan() async throws {
        let observer = TracingEventObserver(tracer: tracer)
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(host: "api.example.com", scheme: .bearer))
        let provider = ScriptedProvider(.token("old.jwt"), .token("new.jwt"))
        provider.rejectionDecision = .retry
        let authorizer = try RequestAuthorizer(policy: policy, providers: [.bearer: provider], diagnostics: RecordingDiagnosticsSink(), observer: observer)
        let transport = RecordingTransport()
        transport.enqueue(.response(ServerResponse(statusCode: 401)))
        let client = AuthorizedHTTPClient(authorizer: authorizer, transport: transport)
        let span = tracer.startSpan("sync inbox")
        _ = try await ServiceContext.withValue(span.context) {
            try await client.send(OutgoingRequest(method: "GET", url: URL(string: "https://api.example.com/inbox")!))
        }
        span.end()
        let finished = try #require(tracer.finishedSpans.first { $0.operationName == "sync inbox" })
        #expect(finished.events.map(\.name) == ["sdkauth.requestAuthorized", "sdkauth.credentialRejected", "sdkauth.retryScheduled", "sdkauth.requestAuthorized"])
        #expect(finished.events[1].attributes["http.response.status_code"]?.toSpanAttribute() == 401)
        #expect(finished.events[1].attributes["sdkauth.status"] == nil)
        #expect(finished.events[3].attributes["sdkauth.attempt"]?.toSpanAttribute() == 2)
        #expect(finished.events[1].attributes["sdkauth.scheme"]?.toSpanAttribute() == "bearer")
    }

    @Test func withoutAnActiveSpanRequestEventsAreDropped() async throws {
        TracingEventObserver(tracer: tracer).observe(AuthorizationEvent(.credentialRejected, scheme: .bearer, status: 401))
        #expect(tracer.finishedSpans.isEmpty)
        #expect(tracer.activeSpans.isEmpty)
    }
}
