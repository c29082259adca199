import Foundation
import SDKAuthorizationTesting
import Testing
import TestSupport
@testable import SDKAuthorization

private struct SignerDown: Error, Equatable {}

/// `Alarms.untilDeadline`: what the client bounds a provider's or transport's call with, and what a
/// provider of an app's own bounds a call it does not control with. All on the manual clock.
@Suite("Waiting for a call until the deadline", .hangLimit)
struct UntilDeadlineTests {
    let clock = ManualClock()

    @Test func aCallThatAnswersAtOnceReturnsItsAnswerAndHoldsNothing() async throws {
        let alarms = Alarms(clock: clock)
        let answer = try await alarms.untilDeadline(RequestDeadline(seconds: 5, from: clock)) { "signed" }
        #expect(answer == "signed")
        #expect(alarms.heldRecords == 0)
    }

    @Test func aCallsOwnErrorIsThrownAsItIs() async {
        let alarms = Alarms(clock: clock)
        await #expect(throws: SignerDown()) {
            try await alarms.untilDeadline(RequestDeadline(seconds: 5, from: clock)) { () async throws -> String in throw SignerDown() }
        }
    }

    @Test func aCallThatIgnoresCancellationEndsTheWaitAtTheDeadlineAndIsCancelled() async throws {
        let alarms = Alarms(clock: clock)
        let gate = AsyncGate()
        defer { gate.open() }
        let cancelled = Locked(false)
        let deadline = RequestDeadline(seconds: 5, from: clock)
        let waiting = Task {
            do {
                _ = try await alarms.untilDeadline(deadline, endpoint: EndpointID("sign")) { () async -> String in
                    await gate.wait()   // ignores cancellation
                    cancelled.withLock { $0 = Task.isCancelled }
                    return "late"
                }
                return RequestError.Code?.none
            } catch {
                return (error as? RequestError)?.code
            }
        }
        await clock.waitForSleepers(count: 1)
        clock.advance(by: 4.999)
        #expect(clock.sleeperCount == 1)
        clock.advance(by: 0.001)
        #expect(await waiting.value == .deadlineExceeded)
        gate.open()
        await eventually("the abandoned call saw its cancellation", { cancelled.withLock { $0 } })
        #expect(alarms.heldRecords == 0)
    }

    @Test func cancellingTheWaitingTaskEndsTheWaitAtOnceWithoutTheCallsAnswer() async throws {
        let alarms = Alarms(clock: clock)
        let gate = AsyncGate()
        defer { gate.open() }
        let entered = Locked(false)
        let waiting = Task {
            do {
                _ = try await alarms.untilDeadline(RequestDeadline(seconds: 5, from: clock)) { () async -> String in
                    entered.withLock { $0 = true }
                    await gate.wait()
                    return "late"
                }
                return RequestError.Code?.none
            } catch {
                return (error as? RequestError)?.code
            }
        }
        await eventually("called", { entered.withLock { $0 } })
        waiting.cancel()
        #expect(await waiting.value == .cancelled)
    }
}
