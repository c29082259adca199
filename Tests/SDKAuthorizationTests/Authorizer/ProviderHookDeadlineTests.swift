import Foundation
import SDKAuthorizationTesting
import Testing
import TestSupport
@testable import SDKAuthorization
import SDKAuthorizationModeKit

/// A provider whose answer hooks (accepted and rejected) wait on a gate that ignores cancellation;
/// it says nothing of deadlines (a provider that hangs cannot say it ends by them).
final class HangingHookProvider: AuthorizationProvider, Sendable {
    let gate = AsyncGate()
    let entered = Counter()

    func credential(for context: AuthorizationContext) async throws -> Credential { .bearer("token-1") }

    func credentialAccepted(_ credential: Credential, response: ServerResponse, context: AuthorizationContext) async {
        _ = entered.increment()
        await gate.wait()
    }

    func credentialRejected(_ credential: Credential, response: ServerResponse, context: AuthorizationContext) async -> RejectionDecision {
        _ = entered.increment()
        await gate.wait()
        return .retry
    }

    var inspectsAcceptedResponses: Bool { true }
}

/// A provider that ends by the deadline (its hooks answer at once) and records the task each hook runs in.
final class HookTaskRecordingProvider: AuthorizationProvider, Sendable {
    let hookTasks = Locked<[Int?]>([])

    func credential(for context: AuthorizationContext) async throws -> Credential { .bearer("token-1") }

    func credentialAccepted(_ credential: Credential, response: ServerResponse, context: AuthorizationContext) async {
        let task = withUnsafeCurrentTask { $0?.hashValue }
        hookTasks.withLock { $0.append(task) }
    }

    func credentialRejected(_ credential: Credential, response: ServerResponse, context: AuthorizationContext) async -> RejectionDecision {
        let task = withUnsafeCurrentTask { $0?.hashValue }
        hookTasks.withLock { $0.append(task) }
        return .fail
    }

    var inspectsAcceptedResponses: Bool { true }
    var endsByDeadline: Bool { true }
}

/// Every await of the request loop ends at the request's deadline or at cancellation, the
/// provider's answer hooks included, even when the request runs in the caller's task.
@Suite("A provider's answer hooks end at the request's deadline", .hangLimit)
struct ProviderHookDeadlineTests {
    let clock = ManualClock()
    let url = URL(string: "https://api.example.com/v1/items")!

    func client(_ provider: any AuthorizationProvider, status: Int) throws -> AuthorizedHTTPClient {
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(host: "api.example.com", scheme: .bearer))
        let authorizer = try RequestAuthorizer(policy: policy, providers: [.bearer: provider], options: AuthorizationOptions(requestDeadline: 1),
                                               clock: clock, diagnostics: RecordingDiagnosticsSink())
        // Ends its sends by the deadline, so the request runs in the caller's task.
        return AuthorizedHTTPClient(authorizer: authorizer, transport: DeadlineEndingTransport { _, _, _ in ServerResponse(statusCode: status) })
    }

    func start(_ client: AuthorizedHTTPClient) -> (Task<RequestError.Code?, Never>, Locked<Bool>) {
        let ended = Locked(false)
        let task = Task { [url] () -> RequestError.Code? in
            defer { ended.withLock { $0 = true } }
            do throws(RequestError) { _ = try await client.send(OutgoingRequest(method: "GET", url: url)); return nil } catch { return error.code }
        }
        return (task, ended)
    }

    func stillRunning(_ ended: Locked<Bool>) async -> Bool {
        for _ in 0..<2_000 { await Task.yield() }
        return !ended.withLock { $0 }
    }

    @Test(arguments: [200, 401])
    func aHookThatNeverReturnsEndsAClientRequestAtItsDeadline(_ status: Int) async throws {
        let provider = HangingHookProvider()
        defer { provider.gate.open() }
        let (request, ended) = start(try client(provider, status: status))
        await eventually("the hook was called", { provider.entered.current == 1 })
        clock.advance(by: 0.999)
        #expect(await stillRunning(ended))
        clock.advance(by: 0.001)
        await eventually("the request ended at its deadline", { ended.withLock { $0 } })
        provider.gate.open()
        #expect(await request.value == .deadlineExceeded)
    }

    @Test func aHookThatNeverReturnsEndsTheRequestWhenItsTaskIsCancelled() async throws {
        let provider = HangingHookProvider()
        defer { provider.gate.open() }
        let (request, ended) = start(try client(provider, status: 200))
        await eventually("the hook was called", { provider.entered.current == 1 })
        request.cancel()
        await eventually("the request ended when cancelled", { ended.withLock { $0 } })
        provider.gate.open()
        #expect(await request.value == .cancelled)
    }

    /// The seam runs the loop in the caller's task; a hook that says nothing runs beside it, in a task
    /// the deadline abandons, and still ends the request at its deadline.
    @Test func aHookThatNeverReturnsEndsASeamRequestAtItsDeadline() async throws {
        let provider = HangingHookProvider()
        defer { provider.gate.open() }
        let authorizer = try client(provider, status: 200).authorizer
        let ended = Locked(false)
        let request = Task { [url] () -> RequestError.Code? in
            defer { ended.withLock { $0 = true } }
            do throws(RequestError) {
                _ = try await authorizer.send(OutgoingRequest(method: "GET", url: url), through: { _ in ServerResponse(statusCode: 200) })
                return nil
            } catch { return error.code }
        }
        await eventually("the hook was called", { provider.entered.current == 1 })
        clock.advance(by: 0.999)
        #expect(await stillRunning(ended))
        clock.advance(by: 0.001)
        await eventually("the request ended at its deadline", { ended.withLock { $0 } })
        #expect(await request.value == .deadlineExceeded)
    }

    /// A provider that ends by the deadline has its rejection hook called in the request's own
    /// task: no task and alarm per call. Its accepted-answer hook is bounded by the deadline all the
    /// same (``AbandonedCallTests/anAcceptedHookEndsAtItsRequestsDeadline()``).
    @Test(arguments: [401])
    func aProviderThatEndsByTheDeadlineHasItsRejectionHookCalledInTheRequestsTask(_ status: Int) async throws {
        let provider = HookTaskRecordingProvider()
        let authorizer = try client(provider, status: status).authorizer
        let callersTask = withUnsafeCurrentTask { $0?.hashValue }
        _ = try? await authorizer.send(OutgoingRequest(method: "GET", url: url), through: { _ in ServerResponse(statusCode: status) })
        let tasks = provider.hookTasks.withLock { $0 }
        #expect(tasks.count == 1)
        #expect(tasks.first.flatMap { $0 } == callersTask)
    }

    @Test func aHookThatReturnsInTimeKeepsTheAnswer() async throws {
        let provider = AcceptedAnswerRecordingProvider(inspects: true)
        let response = try await client(provider, status: 201).send(OutgoingRequest(method: "GET", url: url))
        #expect(response.statusCode == 201)
        #expect(provider.seen.withLock { $0.count } == 1)
    }
}
