import Foundation
internal import SDKAuthorizationPrimitives

/// Runs the jobs of the calls into code that may block its thread (a provider that does not
/// declare ``AuthorizationProvider/endsByDeadline``) on threads of the framework's own, outside the
/// cooperative pool: a call that blocks holds its own thread, never one of the pool's few, so the
/// requests that do not use it, and the alarms that end requests at their deadlines, go on.
///
/// A job never waits behind another: it goes to a parked thread if one is idle, otherwise to a new
/// thread. A thread whose job returned parks for the next one (up to ``maximumIdleThreads`` parked,
/// the rest end), so a call that never blocks pays a hand-over to a waiting thread, not a thread
/// start (Scripts/measure-provider-hop's "declares nothing" row: 78 µs a request with a thread per
/// job). A parked thread waits on its own semaphore and wakes for nothing else; one that blocks
/// for ever keeps its thread, and ``AbandonedCalls`` bounds how many such calls one provider can
/// have.
///
/// Not a dispatch queue: on Linux the cooperative pool runs on Dispatch's worker threads, and jobs
/// that block those delayed the deadline alarms under ThreadSanitizer
/// (`aProviderThatBlocksItsThreadsDelaysNoRequestThatDoesNotUseIt`).
///
/// A call comes here only when it cannot start on its caller's thread (``CallerThreadBudget``):
/// the hand-over there and back costs two thread wake-ups, about 15 µs a request on a 2-core machine
/// against 1.5 µs on the caller's thread (Scripts/measure-provider-hop, "declares nothing").
@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
final class BlockingCallExecutor: TaskExecutor {
    static let shared = BlockingCallExecutor()

    /// How many threads stay parked for the next job; more than this end when their job returns.
    let maximumIdleThreads: Int

    /// A thread of the executor: parked on `wake` until a job is handed to it.
    private final class Worker: Sendable {
        let wake = DispatchSemaphore(value: 0)
        /// The job handed over, written before `wake` is signalled and read after it returns.
        let handedOver = Locked<UnownedJob?>(nil)
    }

    private struct State {
        /// Parked threads, the one parked last on top (its stack and caches are warmest).
        var idle: [Worker] = []
        /// Threads started and not yet ended (for tests).
        var threads = 0
        /// The threads that run jobs, by their POSIX identity (for tests: a thread's Foundation
        /// name is not reliable on Linux).
        var running: Set<pthread_t> = []
    }

    private let state = Locked(State())

    init(maximumIdleThreads: Int = max(2, ProcessInfo.processInfo.activeProcessorCount)) {
        self.maximumIdleThreads = maximumIdleThreads
    }

    /// Threads started and not yet ended, and how many of them are parked (for tests).
    var threadCounts: (running: Int, idle: Int) {
        state.withLock { ($0.threads, $0.idle.count) }
    }

    /// Whether the calling code runs on one of this executor's threads (for tests).
    var runsOnItsOwnThread: Bool {
        let current = pthread_self()
        return state.withLock { $0.running.contains(current) }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let parked = state.withLock { state -> Worker? in
            if let worker = state.idle.popLast() { return worker }
            state.threads += 1
            return nil
        }
        if let parked {
            parked.handedOver.withLock { $0 = job }
            parked.wake.signal()
        } else {
            start(with: job)
        }
    }

    private func start(with job: UnownedJob) {
        let executor = asUnownedTaskExecutor()
        let thread = Thread { [self] in
            let current = pthread_self()
            state.withLock { _ = $0.running.insert(current) }
            defer { state.withLock { _ = $0.running.remove(current) } }
            let worker = Worker()
            var next: UnownedJob? = job
            while let job = next {
                job.runSynchronously(on: executor)
                next = park(worker)
            }
        }
        thread.name = "SDKAuthorization blocking call"
        thread.start()
    }

    /// Parks `worker` until a job is handed to it; `nil` when enough threads are parked already
    /// and this one ends.
    private func park(_ worker: Worker) -> UnownedJob? {
        let parks = state.withLock { state -> Bool in
            guard state.idle.count < maximumIdleThreads else {
                state.threads -= 1
                return false
            }
            state.idle.append(worker)
            return true
        }
        guard parks else { return nil }
        worker.wake.wait()
        return worker.handedOver.withLock { job in defer { job = nil }; return job }
    }
}

/// How many calls that may block their thread (into a provider that does not declare
/// ``AuthorizationProvider/endsByDeadline``, whose doc tells the rest) may run on their callers'
/// threads at once: one fewer than the cooperative pool has threads, so calls that block there can
/// never hold all of them. A call that answers without blocking (a token at hand, or an `await`
/// that suspends) then costs no thread hand-over.
final class CallerThreadBudget: Sendable {
    static let shared = CallerThreadBudget()

    /// How long a call may hold its caller's thread before it counts as having blocked it: far
    /// beyond any call that only computes, on the authorizer's clock.
    static let blockedThreadThreshold: TimeInterval = 0.5

    /// How many calls may be on their callers' threads at once.
    let limit: Int
    private let onCallersThreads = Locked(0)

    init(limit: Int = max(0, ProcessInfo.processInfo.activeProcessorCount - 1)) {
        self.limit = limit
    }

    /// Takes a place for a call on its caller's thread; `false` when ``limit`` are taken.
    func claim() -> Bool {
        onCallersThreads.withLock { count in
            guard count < limit else { return false }
            count += 1
            return true
        }
    }

    /// Gives back a place taken with ``claim()``: the call returned or first suspended.
    func release() {
        onCallersThreads.withLock { $0 -= 1 }
    }
}
