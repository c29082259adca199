import Dispatch
import Foundation
import Testing
import TestSupport
@testable import SDKAuthorization

/// The threads that run calls which may block (``BlockingCallExecutor``): a job never waits behind
/// a blocked one, and a thread whose job returned is reused instead of a new one started.
@Suite("The executor of calls that may block", .hangLimit)
struct BlockingCallExecutorTests {
    /// Runs a task that prefers `executor`, and returns whether it ran on one of its threads.
    func runsOnItsOwnThread(_ executor: BlockingCallExecutor) async -> Bool {
        await Task(executorPreference: executor) { executor.runsOnItsOwnThread }.value
    }

    @Test func callsOneAfterAnotherReuseOneParkedThread() async {
        let executor = BlockingCallExecutor(maximumIdleThreads: 2)
        for _ in 0..<200 {
            #expect(await runsOnItsOwnThread(executor))
            // The caller may resume before the thread that ran its job parks (then the next call
            // rightly starts a thread): each call here comes once the previous thread has parked.
            await eventually("the thread parked", { executor.threadCounts.idle == 1 })
            // Never more than the one: each call found the thread the previous one parked.
            let counts = executor.threadCounts
            #expect(counts == (running: 1, idle: 1))
            // One failure says it; 199 more would only take minutes of waiting.
            if counts != (running: 1, idle: 1) { break }
        }
    }

    @Test func aJobNeverWaitsBehindABlockedOne() async {
        let executor = BlockingCallExecutor(maximumIdleThreads: 1)
        let release = DispatchSemaphore(value: 0)
        let entered = Counter()
        let blocked = (0..<3).map { _ in
            Task(executorPreference: executor) {
                _ = entered.increment()
                release.wait()
            }
        }
        await eventually("three jobs block their threads", { entered.current == 3 })
        // A fourth job starts a thread of its own rather than waiting for one of theirs.
        #expect(await runsOnItsOwnThread(executor))
        for _ in blocked { release.signal() }
        for task in blocked { await task.value }
        // Past the limit of parked threads, the others end.
        await eventually("all but one thread ended", { executor.threadCounts == (running: 1, idle: 1) })
    }
}
