import Dispatch
import SDKAuthorizationModeKit
import Foundation
import SDKAuthorizationTesting
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationEngagement
@testable import SDKAuthorizationIDToken

/// An async provider of the app's own that never answers, and records the context it was asked with.
final class NeverAnsweringProvider: AuthorizationProvider {
    let contexts = Locked<[AuthorizationContext]>([])

    func credential(for context: AuthorizationContext) async throws -> Credential {
        contexts.withLock { $0.append(context) }
        try await Task.sleep(nanoseconds: 3_600_000_000_000)
        return .bearer("late")
    }
}

/// A transport that says it ends by the deadline, so that the request runs in its caller's task.
struct EndsByDeadline: HTTPTransport {
    let wrapping: RecordingTransport
    func send(_ request: OutgoingRequest) async throws -> ServerResponse { try await wrapping.send(request) }
    var endsByDeadline: Bool { true }
}

/// A provider class that blocks inside its call until the test lets it go.
final class BlockedAtTheDeadlineProvider: NSObject, AuthorizationProviderType {
    static let gate = DispatchSemaphore(value: 0)
    static let entered = Locked(0)

    required override init() {}

    func getAuthorizationToken() -> String? {
        Self.entered.withLock { $0 += 1 }
        _ = Self.gate.wait(timeout: .now() + 60)
        return "late.jwt.token"
    }
}

/// A request that waits for a built-in provider waits in its caller's task, and its deadline ends
/// that wait; a provider of the app's own is asked in a task of the request's own, which the
/// deadline cancels. Either way the caller's task is never cancelled. All on the manual clock.
@Suite("Request deadlines while a provider waits", .hangLimit)
struct RequestDeadlineWhileWaitingTests {
    let clock = ManualClock()
    let sink = RecordingDiagnosticsSink()
    let url = URL(string: "https://api.rover.io/ticketing")!

    func client(_ provider: any AuthorizationProvider, transport: any HTTPTransport = RecordingTransport()) throws -> AuthorizedHTTPClient {
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(host: "api.rover.io", scheme: .bearer))
        let authorizer = try RequestAuthorizer(policy: policy, providers: [.bearer: provider], options: AuthorizationOptions(requestDeadline: 5),
                                               clock: clock, diagnostics: sink)
        return AuthorizedHTTPClient(authorizer: authorizer, transport: transport)
    }

    /// Sends one request in a task; returns the error's code (nil on success) and whether the
    /// caller's task was cancelled afterwards.
    func send(_ client: AuthorizedHTTPClient) -> Task<(code: RequestError.Code?, callerCancelled: Bool), Never> {
        let request = OutgoingRequest(method: "GET", url: url)
        return Task {
            do {
                _ = try await client.send(request)
                return (nil, Task.isCancelled)
            } catch let error as RequestError {
                return (error.code, Task.isCancelled)
            } catch {
                return (RequestError.Code(rawValue: "not a RequestError"), Task.isCancelled)
            }
        }
    }

    @Test func aRequestWaitingForARefreshedTokenFailsAtItsDeadlineWithoutCancellingItsCaller() async throws {
        let store = try IDTokenStore(authorizedDomains: ["api.rover.io"], options: .init(refreshTimeout: 30), clock: clock, diagnostics: sink)
        store.registerRefreshCallback {}
        let transport = RecordingTransport()
        let request = send(try client(store, transport: transport))
        await eventually("waiting", { store.waitingRequestCount == 1 })
        await clock.waitForSleepers(count: 1)   // the store's wait, which ends at the request's deadline (5 s), before its timeout (30 s)
        clock.advance(by: 4.999)
        #expect(store.waitingRequestCount == 1)
        clock.advance(by: 0.001)
        await eventually("the wait ended at the deadline", { store.waitingRequestCount == 0 })
        if store.waitingRequestCount != 0 { request.cancel() }   // recorded above; do not hang
        let outcome = await request.value
        #expect(outcome.code == .deadlineExceeded)
        #expect(!outcome.callerCancelled)
        #expect(store.heldWaitRecords == 0)
        #expect(transport.requests.isEmpty)
        #expect(sink.messages(at: .warning).contains { $0.contains("5") && $0.lowercased().contains("deadline") })
    }

    @Test func aTokenSetBeforeTheDeadlineSendsTheRequestWithIt() async throws {
        let store = try IDTokenStore(authorizedDomains: ["api.rover.io"], options: .init(refreshTimeout: 30), clock: clock, diagnostics: sink)
        store.registerRefreshCallback {}
        let transport = RecordingTransport()
        let request = send(try client(store, transport: transport))
        await eventually("waiting", { store.waitingRequestCount == 1 })
        clock.advance(by: 4.9)
        try store.setIDToken("fresh-token")
        let outcome = await request.value
        #expect(outcome.code == nil)
        #expect(transport.requests.map { $0.value(forHeader: "Authorization") } == ["Bearer fresh-token"])
    }

    @Test func aRequestAuthorizedInItsCallersTaskIsStillCancelledAtItsDeadlineWhenTheServerNeverAnswers() async throws {
        let store = try IDTokenStore(authorizedDomains: ["api.rover.io"], clock: clock, diagnostics: sink)
        try store.setIDToken("id-token")
        let transport = RecordingTransport { _ in
            try await Task.sleep(nanoseconds: 3_600_000_000_000)
            return ServerResponse(statusCode: 200)
        }
        let request = send(try client(store, transport: transport))
        await eventually("sent", { transport.requests.count == 1 })
        await clock.waitForSleepers(count: 1)
        clock.advance(by: 5)
        let outcome = await request.value
        #expect(outcome.code == .deadlineExceeded)
        #expect(!outcome.callerCancelled)
    }

    @Test func aProviderOfTheAppsOwnSeesTheRequestDeadlineAndIsCancelledAtIt() async throws {
        let provider = NeverAnsweringProvider()
        let request = send(try client(provider))
        await eventually("asked", { provider.contexts.withLock { $0.count } == 1 })
        await clock.waitForSleepers(count: 1)
        clock.advance(by: 5)
        let outcome = await request.value
        #expect(outcome.code == .deadlineExceeded)
        #expect(!outcome.callerCancelled)
        let deadline = try #require(provider.contexts.withLock { $0.first?.deadline })
        #expect(deadline.seconds == 5)
        #expect(deadline.hasPassed(on: clock))
    }

    @Test func cancellingTheCallerWhileItWaitsForATokenFailsItAsCancelled() async throws {
        let store = try IDTokenStore(authorizedDomains: ["api.rover.io"], clock: clock, diagnostics: sink)
        store.registerRefreshCallback {}
        let request = send(try client(store))
        await eventually("waiting", { store.waitingRequestCount == 1 })
        request.cancel()
        let outcome = await request.value
        #expect(outcome.code == .cancelled)
        #expect(store.heldWaitRecords == 0)
    }

    @Test func aRequestBehindABlockedProviderClassReturnsAtItsDeadlineWhileTheProviderIsStillBlocked() async throws {
        // The provider's deadline runs on the test's clock (on the system clock, the manual clock's
        // deadline had passed at once, racing the provider's queue). The request runs in the
        // caller's task (provider and transport end by the deadline), so the provider's own alarm is
        // the one thing that ends the wait, not also the task a request of its own would run in.
        let provider = CustomerTokenProvider(type: BlockedAtTheDeadlineProvider.self, clock: clock, diagnostics: sink)
        let transport = RecordingTransport()
        let request = send(try client(provider, transport: EndsByDeadline(wrapping: transport)))
        await eventually("the provider is blocked", { BlockedAtTheDeadlineProvider.entered.withLock { $0 } == 1 })
        await clock.waitForSleepers(count: 1)
        clock.advance(by: 5)
        let outcome = await request.value
        // The request has returned and the provider is still inside its call.
        #expect(outcome.code == .deadlineExceeded)
        #expect(!outcome.callerCancelled)
        #expect(transport.requests.isEmpty)
        #expect(sink.messages(at: .warning).contains { $0.contains("still running") && $0.contains("reached its deadline") })
        BlockedAtTheDeadlineProvider.gate.signal()
        await eventually("late answer reported", { sink.messages(at: .info).contains { $0.contains("returned after its request was cancelled") } })
    }

    @Test func alarmsRunInTimeOrderOnceTheirTimeComesAndACancelledOneNever() async throws {
        let alarms = Alarms(clock: clock)
        let runs = Locked<[String]>([])
        let start = clock.monotonicNow()
        _ = alarms.schedule(at: start + 5) { runs.withLock { $0.append("five") } }
        let cancelled = alarms.schedule(at: start + 3) { runs.withLock { $0.append("cancelled") } }
        _ = alarms.schedule(at: start + 2) { runs.withLock { $0.append("two") } }
        alarms.cancel(cancelled)
        await clock.waitForSleepers(count: 1)
        clock.advance(by: 4)
        await eventually("two ran", { runs.withLock { $0 } == ["two"] })
        await clock.waitForSleepers(count: 1)
        clock.advance(by: 1)
        await eventually("five ran", { runs.withLock { $0 } == ["two", "five"] })
        // A time already passed runs at once; nothing is held afterwards.
        _ = alarms.schedule(at: start + 1) { runs.withLock { $0.append("late") } }
        await eventually("late ran", { runs.withLock { $0 }.last == "late" })
        await eventually("nothing held", { alarms.heldRecords == 0 })
    }
}
