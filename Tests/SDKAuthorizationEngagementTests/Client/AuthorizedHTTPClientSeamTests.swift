import Dispatch
import Foundation
import SDKAuthorizationTesting
import EngagementTestSupport
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationModeKit
@testable import SDKAuthorizationEngagement

/// Counts its instances; each instance answers with a token naming it.
final class CountingAuthProvider: NSObject, AuthorizationProviderType {
    static let instances = Locked(0)
    let number: Int

    required override init() {
        number = Self.instances.withLock { count in
            count += 1
            return count
        }
    }

    func getAuthorizationToken() -> String? { "instance.\(number).jwt" }
}

/// Blocks every call until the test opens the gate: a provider stuck inside `getAuthorizationToken()`.
final class StuckAuthProvider: NSObject, AuthorizationProviderType {
    static let gate = DispatchSemaphore(value: 0)
    static let entered = Locked(0)

    required override init() {}

    func getAuthorizationToken() -> String? {
        Self.entered.withLock { $0 += 1 }
        _ = Self.gate.wait(timeout: .now() + 60)
        return "late.jwt.token"
    }
}

@Suite("The client on the seam", .hangLimit)
struct AuthorizedHTTPClientSeamTests {
    let sink = RecordingDiagnosticsSink()

    @Test func catalogueEndpointWithPathParametersAndQueryIsSentWithItsScheme() async throws {
        var policy = AuthorizationPolicy.engagement(advancedAuthEnabled: true)
        try policy.add(Endpoint("segments", method: "GET", path: "/webxp/projects/<projectToken>/customers/<customerId>/segments"), scheme: .bearer)
        let transport = RecordingTransport()
        let client = try AuthorizedHTTPClient(configuration: engagementConfiguration(advancedAuthEnabled: true), provider: ScriptedProvider(.token("c.jwt")),
                                              policy: policy, transport: transport, diagnostics: sink)
        _ = try await client.send("segments", parameters: ["customerId": "c 42"], query: [URLQueryItem(name: "since", value: "2026-01-01")])
        let sent = try #require(transport.requests.first)
        #expect(sent.method == "GET")
        #expect(sent.url.absoluteString == "https://api.example.com/webxp/projects/project-1/customers/c%2042/segments?since=2026-01-01")
        #expect(sent.value(forHeader: "Authorization") == "Bearer c.jwt")
    }

    @Test func anyRequestIsSentWithTheSchemeOfTheEndpointOrRuleItMatches() async throws {
        var policy = AuthorizationPolicy.engagement(advancedAuthEnabled: true)
        policy.add(try AuthorizationRule(host: "media.example.com", path: "/private/**", method: "GET", scheme: .bearer))
        let transport = RecordingTransport()
        let client = try AuthorizedHTTPClient(configuration: engagementConfiguration(advancedAuthEnabled: true), provider: ScriptedProvider(.token("c.jwt")),
                                              policy: policy, transport: transport, diagnostics: sink)
        _ = try await client.send(OutgoingRequest(method: "GET", url: URL(string: "https://media.example.com/private/a.png?size=2")!))
        _ = try await client.send(OutgoingRequest(method: "POST", url: URL(string: "https://api.example.com/track/v2/projects/project-1/customers")!))
        _ = try await client.send(OutgoingRequest(method: "GET", url: URL(string: "https://media.example.com/public/a.png")!))
        #expect(transport.requests.map { $0.value(forHeader: "Authorization") } == ["Bearer c.jwt", "Token api-key-1", nil])
    }

    @Test func providerPassedDirectlyNeedsNoRegistryAndNoName() async throws {
        let provider = ScriptedProvider(.token("direct.jwt"))
        let transport = RecordingTransport()
        let client = try AuthorizedHTTPClient(configuration: engagementConfiguration(advancedAuthEnabled: true), provider: provider,
                                              transport: transport, diagnostics: sink)
        _ = try await client.send(.appInboxFetch)
        #expect(transport.requests.first?.value(forHeader: "Authorization") == "Bearer direct.jwt")
        #expect(client.provider as? ScriptedProvider === provider)
        try await client.identityDidChange()
        #expect(provider.identityChangeCount == 1)
    }

    @Test func providerPassedWithAdvancedAuthDisabledIsAConfigurationError() throws {
        #expect(throws: ConfigurationError.providerWithoutAdvancedAuth) {
            try AuthorizedHTTPClient(configuration: engagementConfiguration(advancedAuthEnabled: false), provider: ScriptedProvider(), diagnostics: sink)
        }
        #expect(sink.diagnostics.isEmpty, "a start-up error is thrown, not also logged")
    }

    @Test func rejectionIsReportedToTheProviderThatIssuedTheTokenNotToOneSwappedInSince() async throws {
        let first = ScriptedProvider(.token("first.jwt"))
        let second = ScriptedProvider(.token("second.jwt"))
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(host: "api.example.com", scheme: .bearer))
        let authorizer = try RequestAuthorizer(policy: policy, providers: [.bearer: first], diagnostics: sink)
        let transport = RecordingTransport { _ in
            authorizer.setProvider(second, for: .bearer)   // an identity change while the request is in flight
            return ServerResponse(statusCode: 401)
        }
        let client = AuthorizedHTTPClient(authorizer: authorizer, transport: transport)
        await #expect(throws: RequestError.self) { try await client.send(OutgoingRequest(method: "GET", url: URL(string: "https://api.example.com/x")!)) }
        #expect(first.rejectedCredentials == ["first.jwt"])
        #expect(second.rejections.isEmpty)
        #expect(second.requestedContexts.isEmpty)
    }

    @Test func twoThousandBearerSendsAcrossTwentyIdentityChangesAllSucceed() async throws {
        let registry = ProviderRegistry()
        registry.register(CountingAuthProvider.self, as: "ExponeaAuthProvider")
        let transport = RecordingTransport()
        let client = try AuthorizedHTTPClient(configuration: engagementConfiguration(advancedAuthEnabled: true), registry: registry,
                                              transport: transport, diagnostics: sink)
        let failures = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<2_000 {
                group.addTask {
                    do { _ = try await client.send(.appInboxFetch); return 0 } catch { return 1 }
                }
            }
            group.addTask {
                for _ in 0..<20 {
                    do { try await client.identityDidChange() } catch { return 1 }
                    await Task.yield()
                }
                return 0
            }
            return await group.reduce(0, +)
        }
        #expect(failures == 0)
        #expect(transport.requests.count == 2_000)
        #expect(transport.requests.allSatisfy { $0.value(forHeader: "Authorization")?.hasPrefix("Bearer instance.") == true })
        #expect(registry.lookupCount == 21)   // loaded at init, then once per identity change
    }

    @Test func identityChangeWhoseProviderCannotLoadLeavesNoProviderRatherThanTheOldUsers() async throws {
        let registry = ProviderRegistry()
        registry.register(ExampleAuthProvider.self, as: "ExponeaAuthProvider")
        let transport = RecordingTransport()
        let client = try AuthorizedHTTPClient(configuration: engagementConfiguration(advancedAuthEnabled: true), registry: registry,
                                              transport: transport, diagnostics: sink)
        registry.unregister("ExponeaAuthProvider")
        await #expect(throws: ConfigurationError.advancedAuthEnabledWithoutProvider) { try await client.identityDidChange() }
        await #expect(throws: RequestError.noProvider(endpoint: .appInboxFetch)) { try await client.send(.appInboxFetch) }
        #expect(transport.requests.isEmpty)
    }

    @Test func errorsKeepTheUnderlyingErrorTheResponseHeadersAndWhetherTheRequestWasSent() async throws {
        struct ProviderOffline: Error, Equatable { let code: Int }
        let failing = try AuthorizedHTTPClient(configuration: engagementConfiguration(advancedAuthEnabled: true),
                                               provider: ScriptedProvider(.failure(ProviderOffline(code: 7))), transport: RecordingTransport(), diagnostics: sink)
        do {
            _ = try await failing.send(.appInboxFetch)
            Issue.record("sent")
        } catch {
            #expect(error.code == .providerFailed)
            #expect(error.underlyingError as? ProviderOffline == ProviderOffline(code: 7))
            #expect(!error.wasSent)
        }
        let rejecting = try AuthorizedHTTPClient(
            configuration: engagementConfiguration(), transport: RecordingTransport(statusCode: 401, body: #"{"error":"x"}"#, headers: ["WWW-Authenticate": "Token realm=\"api\""]),
            diagnostics: sink
        )
        do {
            _ = try await rejecting.send(.trackEvents)
            Issue.record("accepted")
        } catch {
            #expect(error.code == .authorizationRejected)
            #expect(error.wasSent)
            #expect(error.response?.value(forHeader: "WWW-Authenticate") == "Token realm=\"api\"")
            #expect(error.body == Data(#"{"error":"x"}"#.utf8))
            #expect(!error.description.contains("api-key-1"))
        }
    }

    @Test func requestPastItsDeadlineFailsWithDeadlineExceededOnTheMonotonicClock() async throws {
        let clock = ManualClock()
        let transport = RecordingTransport { _ in
            try await Task.sleep(nanoseconds: 3_600_000_000_000)   // a server that never answers; cancelled at the deadline
            return ServerResponse(statusCode: 200)
        }
        let client = try AuthorizedHTTPClient(configuration: engagementConfiguration(), transport: transport, diagnostics: sink, clock: clock,
                                              options: AuthorizationOptions(requestDeadline: 5))
        let request = Task { try await client.send(.trackEvents) }
        await clock.waitForSleepers(count: 1)
        await eventually("sent", { transport.requests.count == 1 })
        clock.setWallClock(to: clock.now().addingTimeInterval(-3600))   // the user sets the clock back: no effect
        clock.advance(by: 4.999)
        #expect(clock.sleeperCount == 1)
        clock.advance(by: 0.001)
        do {
            _ = try await request.value
            Issue.record("answered")
        } catch let error as RequestError {
            #expect(error.code == .deadlineExceeded)
        }
    }

    @Test func fiftyRequestsCancelledBehindABlockedSynchronousProviderAllReturnWhileItIsStillBlocked() async throws {
        let registry = ProviderRegistry()
        registry.register(StuckAuthProvider.self, as: "ExponeaAuthProvider")
        let transport = RecordingTransport()
        let client = try AuthorizedHTTPClient(configuration: engagementConfiguration(advancedAuthEnabled: true), registry: registry,
                                              transport: transport, diagnostics: sink)
        let tasks = (0..<50).map { _ in Task { try await client.send(.appInboxFetch) } }
        await eventually("the provider is stuck", { StuckAuthProvider.entered.withLock { $0 } == 1 })
        for task in tasks { task.cancel() }
        var cancelled = 0
        for task in tasks {
            do { _ = try await task.value } catch let error as RequestError where error.code == .cancelled { cancelled += 1 }
        }
        // Every request has returned and the provider is still inside its first call.
        #expect(cancelled == 50)
        #expect(StuckAuthProvider.entered.withLock { $0 } == 1)
        #expect(transport.requests.isEmpty)
        #expect(sink.messages(at: .warning).filter { $0.contains("is still running") }.count == 1)
        StuckAuthProvider.gate.signal()
        await eventually("late answer reported", { sink.messages(at: .info).contains { $0.contains("returned after its request was cancelled") } })
    }

    @Test func retryAfterWaitsOnTheClockBeforeTheSecondAttempt() async throws {
        let clock = ManualClock()
        let provider = ScriptedProvider(.token("old.jwt"), .token("new.jwt"))
        provider.rejectionDecision = .retryAfter(2)
        let transport = RecordingTransport()
        transport.enqueue(.response(ServerResponse(statusCode: 401)))
        // Both declare `endsByDeadline`, so no deadline alarm is set: the one sleeper is the retry delay.
        let client = try AuthorizedHTTPClient(configuration: engagementConfiguration(advancedAuthEnabled: true), provider: DeclaringProvider(wrapped: provider),
                                              transport: DeclaringTransport(wrapped: transport), diagnostics: sink, clock: clock)
        let request = Task { try await client.send(.appInboxFetch) }
        await clock.waitForSleepers(count: 1)
        #expect(transport.requests.count == 1)
        clock.advance(by: 2)
        #expect(try await request.value.statusCode == 200)
        #expect(transport.requests.map { $0.value(forHeader: "Authorization") } == ["Bearer old.jwt", "Bearer new.jwt"])
    }
}

/// `wrapped`, saying it ends its waits by the deadline: called in the request's task, with no alarm.
private struct DeclaringProvider: AuthorizationProvider {
    let wrapped: ScriptedProvider
    func credential(for context: AuthorizationContext) async throws -> Credential { try await wrapped.credential(for: context) }
    func credentialRejected(_ credential: Credential, response: ServerResponse, context: AuthorizationContext) async -> RejectionDecision {
        await wrapped.credentialRejected(credential, response: response, context: context)
    }
    var endsByDeadline: Bool { true }
}

/// `wrapped`, saying it ends its sends by the deadline: it sends in the request's task, with no alarm.
private struct DeclaringTransport: HTTPTransport {
    let wrapped: RecordingTransport
    func send(_ request: OutgoingRequest) async throws -> ServerResponse { try await wrapped.send(request) }
    var endsByDeadline: Bool { true }
}
