import Foundation
import SDKAuthorizationTesting
import Testing
import TestSupport
@testable import SDKAuthorization
import SDKAuthorizationModeKit

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
                _ = try await alarms.untilDeadline(deadline, endpoint: Endpoint.ID("sign")) { () async -> String in
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

    // MARK: A call that answers through a handler

    @Test func aHandlersFirstAnswerWinsAndALaterOneIsRefused() async throws {
        let alarms = Alarms(clock: clock)
        let second = Locked<Bool?>(nil)
        let answer = try await alarms.firstAnswer(by: RequestDeadline(seconds: 5, from: clock)) { (answer: @escaping @Sendable (Result<String, any Error>) -> Bool) in
            _ = answer(.success("first"))
            second.withLock { $0 = answer(.success("second")) }
        }
        #expect(answer == "first")
        #expect(second.withLock { $0 } == false, "the second answer is refused")
        #expect(alarms.heldRecords == 0, "an answer at once sets no alarm")
    }

    @Test func aHandlerThatNeverAnswersEndsAtTheDeadlineAndItsLateAnswerIsRefused() async throws {
        let alarms = Alarms(clock: clock)
        let handler = Locked<(@Sendable (Result<String, any Error>) -> Bool)?>(nil)
        let waiting = Task {
            try await alarms.firstAnswer(by: RequestDeadline(seconds: 5, from: clock), endpoint: Endpoint.ID("sign")) { answer in
                handler.withLock { $0 = answer }
            }
        }
        await eventually("the alarm is set", { alarms.heldRecords > 0 })
        clock.advance(by: 5)
        await #expect(throws: RequestError.deadlineExceeded(endpoint: Endpoint.ID("sign"), after: 5)) { try await waiting.value }
        #expect(handler.withLock { $0 }?(.success("late")) == false)
        #expect(alarms.heldRecords == 0)
    }

    @Test func aCancelledWaitForAHandlerEndsAsCancelled() async throws {
        let alarms = Alarms(clock: clock)
        let started = AsyncGate()
        let waiting = Task {
            try await alarms.firstAnswer(by: nil) { (_: @escaping @Sendable (Result<String, any Error>) -> Bool) in started.open() }
        }
        await started.wait()
        waiting.cancel()
        await #expect(throws: RequestError.cancelled) { try await waiting.value }
    }

}
