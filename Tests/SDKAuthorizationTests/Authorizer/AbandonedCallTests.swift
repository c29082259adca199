import Dispatch
import Foundation
import SDKAuthorizationTesting
import Testing
import TestSupport
@testable import SDKAuthorization
import SDKAuthorizationModeKit

/// A provider that never answers until the test opens its gate, ignoring cancellation, as a hung
/// app callback does; it says nothing of deadlines.
final class NeverAnsweringProvider: AuthorizationProvider, Sendable {
    let gate = AsyncGate()
    let entered = Counter()

    func credential(for context: AuthorizationContext) async throws -> Credential {
        _ = entered.increment()
        await gate.wait()
        return .bearer("late")
    }
}

/// A provider that blocks its thread (documented as not allowed) until the test signals it.
final class ThreadBlockingProvider: AuthorizationProvider, Sendable {
    let semaphore = DispatchSemaphore(value: 0)
    let entered = Counter()
    let answered = Counter()
    /// For each call, whether it ran on the framework's own threads for calls that may block.
    let ranOnOwnThreads = Locked<[Bool]>([])

    func credential(for context: AuthorizationContext) async throws -> Credential {
        let own = BlockingCallExecutor.shared.runsOnItsOwnThread
        ranOnOwnThreads.withLock { $0.append(own) }
        _ = entered.increment()
        block()
        _ = answered.increment()
        return .bearer("slow")
    }

    private func block() { semaphore.wait() }

    func release(_ count: Int) { for _ in 0..<count { semaphore.signal() } }
}

/// A provider that answers at once and says nothing of deadlines; it records, for each call, the
/// thread it ran on.
final class WhereItRanProvider: AuthorizationProvider, Sendable {
    let threads = Locked<[pthread_t]>([])
    let ranOnOwnThreads = Locked<[Bool]>([])

    func credential(for context: AuthorizationContext) async throws -> Credential {
        let own = BlockingCallExecutor.shared.runsOnItsOwnThread
        let thread = pthread_self()
        ranOnOwnThreads.withLock { $0.append(own) }
        threads.withLock { $0.append(thread) }
        return .bearer("fast")
    }
}

/// A provider that holds its caller's thread for the time the test gives each call, on the test's
/// manual clock (it moves the clock while it runs, as a real block lets real time pass).
final class ThreadHoldingProvider: AuthorizationProvider, Sendable {
    let clock: ManualClock
    let holds: Locked<[TimeInterval]>
    let ranOnOwnThreads = Locked<[Bool]>([])

    init(clock: ManualClock, holds: [TimeInterval]) {
        self.clock = clock
        self.holds = Locked(holds)
    }

    func credential(for context: AuthorizationContext) async throws -> Credential {
        let own = BlockingCallExecutor.shared.runsOnItsOwnThread
        ranOnOwnThreads.withLock { $0.append(own) }
        let hold = holds.withLock { $0.isEmpty ? 0 : $0.removeFirst() }
        clock.advance(by: hold)
        return .bearer("held")
    }
}

/// A provider that ends by the deadline for its credential, but whose accepted-answer hook takes
/// as long as the test makes it.
final class SlowAcceptedHookProvider: AuthorizationProvider, Sendable {
    let gate = AsyncGate()
    let entered = Counter()

    func credential(for context: AuthorizationContext) async throws -> Credential { .bearer("token-1") }

    func credentialAccepted(_ credential: Credential, response: ServerResponse, context: AuthorizationContext) async {
        _ = entered.increment()
        await gate.wait()
    }

    var inspectsAcceptedResponses: Bool { true }
    var endsByDeadline: Bool { true }
}

/// Releases what a test blocked after `seconds` of real time if the test has not by then, so a test
/// that fails because the pool is starved fails instead of hanging; it records that it had to.
final class Watchdog: Sendable {
    private let done = DispatchSemaphore(value: 0)
    let fired = Locked(false)

    init(seconds: Int, release: @escaping @Sendable () -> Void) {
        let thread = Thread { [done, fired] in
            if done.wait(timeout: .now() + .seconds(seconds)) == .timedOut {
                fired.withLock { $0 = true }
                release()
            }
        }
        thread.start()
    }

    func finish() { done.signal() }
}

/// Calls a request gave up on (its deadline or a cancellation) but that still run are bounded in
/// number for each provider and transport; a provider that blocks its thread delays no request that
/// does not use it.
// Serialized: one test at a time blocks a thread of the cooperative pool, on a budget of its own
// (the shared budget keeps a place for every other suite).
@Suite("Abandoned and blocking calls", .hangLimit, .serialized)
struct AbandonedCallTests {
    let clock = ManualClock()
    let url = URL(string: "https://api.example.com/v1/items")!

    func authorizer(_ providers: [AuthorizationScheme: any AuthorizationProvider], limit: Int = 3, deadline: TimeInterval = 1,
                    callerThreads: CallerThreadBudget = .shared, diagnostics: RecordingDiagnosticsSink = RecordingDiagnosticsSink()) throws -> RequestAuthorizer {
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(host: "api.example.com", scheme: .bearer))
        if providers["slow"] != nil { policy.add(try AuthorizationRule(host: "slow.example.com", scheme: "slow")) }
        var options = AuthorizationOptions(requestDeadline: deadline)
        options.abandonedCallLimit = limit
        return try RequestAuthorizer(policy: policy, providers: providers, options: options, clock: clock, diagnostics: diagnostics,
                                     callerThreads: callerThreads)
    }

    func start(_ authorizer: RequestAuthorizer, _ url: URL, ended: Counter = Counter()) -> Task<RequestError.Code?, Never> {
        Task { () -> RequestError.Code? in
            defer { _ = ended.increment() }
            do throws(RequestError) {
                _ = try await authorizer.send(OutgoingRequest(method: "GET", url: url), through: { _ in ServerResponse(statusCode: 200) })
                return nil
            } catch { return error.code }
        }
    }

    @Test func pastTheLimitOfAbandonedCallsANewRequestToThatProviderFailsAtOnce() async throws {
        let provider = NeverAnsweringProvider()
        defer { provider.gate.open() }
        let authorizer = try authorizer([.bearer: provider])
        let hung = (0..<3).map { _ in start(authorizer, url) }
        await eventually("three calls reached the provider", { provider.entered.current == 3 })
        clock.advance(by: 1)
        for request in hung { #expect(await request.value == .deadlineExceeded) }
        #expect(authorizer.abandonedCalls.running == 3)

        // The fourth fails at once, without the clock moving, and never reaches the provider.
        let ended = Counter()
        let fourth = start(authorizer, url, ended: ended)
        await eventually("the fourth request ended at once", { ended.current == 1 })
        clock.advance(by: 1)
        #expect(await fourth.value == .tooManyAbandonedCalls)
        #expect(provider.entered.current == 3)

        // Once the abandoned calls end, their places are free again.
        provider.gate.open()
        await eventually("the abandoned calls ended", { authorizer.abandonedCalls.running == 0 })
        #expect(await start(authorizer, url).value == nil)
    }

    @Test func theErrorSaysWhatIsStuckAndThatTheRequestWasNotSent() async throws {
        let provider = NeverAnsweringProvider()
        defer { provider.gate.open() }
        let authorizer = try authorizer([.bearer: provider], limit: 1)
        let hung = start(authorizer, url)
        await eventually("the call reached the provider", { provider.entered.current == 1 })
        clock.advance(by: 1)
        _ = await hung.value
        let error = await #expect(throws: RequestError.self) {
            try await authorizer.send(OutgoingRequest(method: "GET", url: url), through: { _ in ServerResponse(statusCode: 200) })
        }
        #expect(error?.code == .tooManyAbandonedCalls)
        #expect(error?.wasSent == false)
        #expect(error?.scheme == .bearer)
        #expect(error.map { "\($0)" }?.contains("still running") == true)
    }

    /// Only the provider whose calls are stuck is refused: another scheme's goes on.
    @Test func aFullProviderDoesNotRefuseRequestsToAnotherProvider() async throws {
        let stuck = NeverAnsweringProvider()
        defer { stuck.gate.open() }
        let authorizer = try authorizer([.bearer: ScriptedProvider(.token("fast")), "slow": stuck], limit: 1)
        let slowURL = try #require(URL(string: "https://slow.example.com/x"))
        let hung = start(authorizer, slowURL)
        await eventually("the call reached the provider", { stuck.entered.current == 1 })
        clock.advance(by: 1)
        #expect(await hung.value == .deadlineExceeded)
        #expect(await start(authorizer, slowURL).value == .tooManyAbandonedCalls)
        #expect(await start(authorizer, url).value == nil)
    }

    @Test func pastTheLimitOfAbandonedSendsANewRequestThroughThatTransportFailsAtOnce() async throws {
        let gate = AsyncGate()
        defer { gate.open() }
        let transport = RecordingTransport { _ in
            await gate.wait()
            return ServerResponse(statusCode: 200)
        }
        let client = AuthorizedHTTPClient(authorizer: try authorizer([.bearer: ScriptedProvider(.token("t"))], limit: 2), transport: transport)
        let send = { [url] (ended: Counter) in
            Task { () -> RequestError.Code? in
                defer { _ = ended.increment() }
                do throws(RequestError) { _ = try await client.send(OutgoingRequest(method: "GET", url: url)); return nil } catch { return error.code }
            }
        }
        let hung = (0..<2).map { _ in send(Counter()) }
        await eventually("two sends reached the transport", { transport.requests.count == 2 })
        clock.advance(by: 1)
        for request in hung { #expect(await request.value == .deadlineExceeded) }

        let ended = Counter()
        let third = send(ended)
        await eventually("the third request ended at once", { ended.current == 1 })
        clock.advance(by: 1)
        #expect(await third.value == .tooManyAbandonedCalls)
        #expect(transport.requests.count == 2)

        gate.open()
        await eventually("the abandoned sends ended", { client.authorizer.abandonedCalls.running == 0 })
        #expect(await send(Counter()).value == nil)
    }

    /// More blocked calls than the cooperative pool has threads: one starts on its caller's thread
    /// (the budget's one place) and blocks it, the others run on the framework's own threads; a
    /// request to another, instant provider still completes, and the requests whose calls block on
    /// the framework's threads end at their deadline while their calls block.
    @Test func aProviderThatBlocksItsThreadsDelaysNoRequestThatDoesNotUseIt() async throws {
        let blocking = ThreadBlockingProvider()
        let count = ProcessInfo.processInfo.activeProcessorCount + 2
        // Generous: under ThreadSanitizer on a busy 2-core machine the whole suite takes 40 s and more,
        // and this test may wait that long for its turn; it only keeps a starved pool from hanging.
        let watchdog = Watchdog(seconds: 150) { blocking.release(count) }
        defer { watchdog.finish() }
        let fast = WhereItRanProvider()
        let authorizer = try authorizer([.bearer: fast, "slow": blocking], limit: count, callerThreads: CallerThreadBudget(limit: 1))
        let slowURL = try #require(URL(string: "https://slow.example.com/x"))
        let ended = Counter()
        let blocked = (0..<count).map { _ in start(authorizer, slowURL, ended: ended) }
        await eventually("every blocking call started", { blocking.entered.current == count })
        // Where they block: one on its caller's thread, the rest on the framework's own threads.
        #expect(blocking.ranOnOwnThreads.withLock { $0 }.sorted { !$0 && $1 } == [false] + Array(repeating: true, count: count - 1))

        // The budget is taken: the instant provider's call runs on the framework's threads too.
        #expect(await start(authorizer, url).value == nil)
        #expect(fast.ranOnOwnThreads.withLock { $0 } == [true])
        // The alarms still run: the requests whose calls block on the framework's threads end at
        // their deadline while their calls block.
        clock.advance(by: 1)
        await eventually("every request but the one whose own thread is blocked ended", { ended.current == count - 1 })
        #expect(blocking.answered.current == 0)
        #expect(watchdog.fired.withLock { $0 } == false, "the pool was starved until the watchdog released the blocked calls")

        blocking.release(count)
        // The one that blocked its caller's thread ends when its call returns, past its deadline.
        for request in blocked { #expect(await request.value == .deadlineExceeded) }
        await eventually("the blocked calls ended", { blocking.answered.current == count && authorizer.abandonedCalls.running == 0 })
    }

    /// An app's provider that declares nothing and answers at once costs no thread hand-over: its
    /// call runs on the caller's thread, and its place there is free again for the next call.
    @Test func anUndeclaredProviderThatAnswersAtOnceRunsOnItsCallersThread() async throws {
        let provider = WhereItRanProvider()
        let authorizer = try authorizer([.bearer: provider], callerThreads: CallerThreadBudget(limit: 1))
        let calls = Task { () -> [pthread_t] in
            var callers: [pthread_t] = []
            for _ in 0..<3 {
                callers.append(pthread_self())
                _ = try await authorizer.authorize(OutgoingRequest(method: "GET", url: url))
            }
            return callers
        }
        let callers = try await calls.value
        #expect(provider.ranOnOwnThreads.withLock { $0 } == [false, false, false])
        let ranOn = provider.threads.withLock { $0 }
        #expect(ranOn.count == 3)
        for (caller, provider) in zip(callers, ranOn) { #expect(pthread_equal(caller, provider) != 0) }
    }

    /// A provider that held its caller's thread for half a second or more (on the authorizer's
    /// clock) has blocked it: one warning says so, and its later calls run on the framework's own
    /// threads.
    @Test func aProviderThatBlockedItsCallersThreadIsWarnedOnceAndRunsOffThePoolFromThen() async throws {
        let provider = ThreadHoldingProvider(clock: clock, holds: [0.6, 0.6, 0.6])
        let diagnostics = RecordingDiagnosticsSink()
        let authorizer = try authorizer([.bearer: provider], deadline: 10, callerThreads: CallerThreadBudget(limit: 1), diagnostics: diagnostics)
        for _ in 0..<3 { #expect(await start(authorizer, url).value == nil) }
        #expect(provider.ranOnOwnThreads.withLock { $0 } == [false, true, true])
        #expect(diagnostics.messages(at: .warning) == [
            "The provider of the scheme bearer blocked its thread for 0.6 s; a provider must not block (await instead). Its calls now run on threads of their own, off the cooperative pool.",
        ])
    }

    /// Just short of the threshold is not blocking: no warning, and the provider's calls stay on
    /// their callers' threads.
    @Test func aProviderThatHeldItsCallersThreadForLessThanHalfASecondIsNotWarnedAbout() async throws {
        let provider = ThreadHoldingProvider(clock: clock, holds: [0.49, 0.49])
        let diagnostics = RecordingDiagnosticsSink()
        let authorizer = try authorizer([.bearer: provider], deadline: 10, callerThreads: CallerThreadBudget(limit: 1), diagnostics: diagnostics)
        for _ in 0..<2 { #expect(await start(authorizer, url).value == nil) }
        #expect(provider.ranOnOwnThreads.withLock { $0 } == [false, false])
        #expect(diagnostics.messages(at: .warning).isEmpty)
    }

    /// A provider that says it ends by the deadline, with an accepted-answer hook that does not.
    @Test func anAcceptedHookEndsAtItsRequestsDeadline() async throws {
        let provider = SlowAcceptedHookProvider()
        defer { provider.gate.open() }
        let authorizer = try authorizer([.bearer: provider])
        let ended = Counter()
        let request = start(authorizer, url, ended: ended)
        await eventually("the hook was called", { provider.entered.current == 1 })
        clock.advance(by: 0.999)
        for _ in 0..<2_000 { await Task.yield() }
        #expect(ended.current == 0)
        clock.advance(by: 0.001)
        await eventually("the request ended at its deadline", { ended.current == 1 })
        provider.gate.open()
        #expect(await request.value == .deadlineExceeded)
    }
}
