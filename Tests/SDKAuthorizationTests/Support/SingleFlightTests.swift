import Foundation
import SDKAuthorizationTesting
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationModeKit

@Suite("The single-flight refresh primitive", .hangLimit)
struct SingleFlightTests {
    let clock = ManualClock()

    /// Starts a wait that records its arrival number and its outcome's value.
    func waiter(_ flights: SingleFlight<Int>, _ order: Locked<[Int]>, number: Int, deadline: RequestDeadline? = nil,
                started: Locked<[SingleFlight<Int>.Flight]>) -> Task<SingleFlight<Int>.Outcome, Never> {
        Task {
            let outcome = await flights.value(deadline: deadline, isUsable: { _ in false }, join: .wait(start: { flight in
                started.withLock { $0.append(flight) }
                return nil
            }))
            order.withLock { $0.append(number) }
            return outcome
        }
    }

    @Test func oneFlightServesEveryWaiterAndNothingIsHeldAfterwards() async throws {
        let flights = SingleFlight<Int>(clock: clock)
        let order = Locked<[Int]>([]), started = Locked<[SingleFlight<Int>.Flight]>([])
        var tasks: [Task<SingleFlight<Int>.Outcome, Never>] = []
        for number in 0..<50 {
            tasks.append(waiter(flights, order, number: number, started: started))
            await eventually("waiter \(number)", { flights.waitingCount == number + 1 })
        }
        #expect(started.withLock { $0.count } == 1)
        let flight = try #require(started.withLock { $0.first })
        #expect(flights.finish(flight, with: .success(7)) == 50)
        for task in tasks {
            guard case .value(7) = await task.value else { Issue.record("not the flight's value"); return }
        }
        #expect(order.withLock { Set($0) } == Set(0..<50))
        #expect(flights.heldRecords == 0)
    }

    @Test func aLateValueFromBeforeAResetIsDiscarded() async throws {
        let flights = SingleFlight<Int>(clock: clock)
        let order = Locked<[Int]>([]), started = Locked<[SingleFlight<Int>.Flight]>([])
        let task = waiter(flights, order, number: 1, started: started)
        await eventually("waiting", { flights.waitingCount == 1 })
        let flight = try #require(started.withLock { $0.first })
        var removed = false
        flights.reset(thenRemove: { removed = true })
        guard case .cleared = await task.value else { Issue.record("not cleared"); return }
        #expect(removed)
        #expect(flights.finish(flight, with: .success(1)) == nil)
        #expect(flights.current == nil)
        var saved = false
        flights.persist({ saved = true }, generation: flight.generation)
        #expect(!saved)
    }

    @Test func anAbandonedFlightIsCancelledItsLateValueDiscardedAndTheNextRequestStartsAnother() async throws {
        let cancelled = Locked(0)
        let flights = SingleFlight<Int>(clock: clock, configuration: .init(abandonsUnwatchedFlights: true))
        let started = Locked<[SingleFlight<Int>.Flight]>([])
        let join = SingleFlight<Int>.Join.wait(start: { flight in
            started.withLock { $0.append(flight) }
            return { cancelled.withLock { $0 += 1 } }
        })
        let deadline = RequestDeadline(seconds: 1, from: clock)
        let first = Task { await flights.value(deadline: deadline, isUsable: { _ in true }, join: join) }
        await eventually("waiting", { flights.waitingCount == 1 })
        clock.advance(by: 1)
        guard case .deadlineExceeded = await first.value else { Issue.record("not at its deadline"); return }
        #expect(cancelled.withLock { $0 } == 1)
        let abandoned = try #require(started.withLock { $0.first })
        #expect(flights.finish(abandoned, with: .success(1)) == nil)

        let second = Task { await flights.value(deadline: nil, isUsable: { _ in true }, join: join) }
        await eventually("a second flight", { started.withLock { $0.count } == 2 })
        let next = try #require(started.withLock { $0.last })
        flights.finish(next, with: .success(2))
        guard case .value(2) = await second.value else { Issue.record("not the new flight's value"); return }
        await eventually("nothing held", { flights.heldRecords == 0 })
    }

    @Test func eachWaitEndsAtItsOwnLimitAndTheOthersKeepWaiting() async throws {
        let flights = SingleFlight<Int>(clock: clock)
        let short = Task { await flights.value(deadline: RequestDeadline(seconds: 1, from: clock), waitLimit: 10, isUsable: { _ in false }, join: .waitOnly) }
        let long = Task { await flights.value(deadline: nil, waitLimit: 10, isUsable: { _ in false }, join: .waitOnly) }
        await eventually("two waiting", { flights.waitingCount == 2 })
        clock.advance(by: 1)
        guard case .deadlineExceeded = await short.value else { Issue.record("the short wait did not end at its deadline"); return }
        #expect(flights.waitingCount == 1)
        clock.advance(by: 9)
        guard case .timedOut = await long.value else { Issue.record("the long wait did not time out"); return }
        await eventually("nothing held", { flights.heldRecords == 0 })
    }

    /// The waits share one alarm at the earliest limit; when it rings, one pass ends the waits due
    /// and sets it for the next. Limits that arrive latest-first each still end at their own time.
    @Test func waitsWhoseLimitsArriveInAnyOrderEachEndAtTheirOwnLimit() async throws {
        let flights = SingleFlight<Int>(clock: clock)
        let ended = Locked<[Int]>([])
        func wait(seconds: TimeInterval) -> Task<Void, Never> {
            Task {
                _ = await flights.value(deadline: nil, waitLimit: seconds, isUsable: { _ in false }, join: .waitOnly)
                ended.withLock { $0.append(Int(seconds)) }
            }
        }
        let waits = [wait(seconds: 3)]
        await eventually("the 3 s wait waits", { flights.waitingCount == 1 })
        let more = [wait(seconds: 1)]
        await eventually("the 1 s wait waits", { flights.waitingCount == 2 })
        let last = [wait(seconds: 2)]
        await eventually("the 2 s wait waits", { flights.waitingCount == 3 })
        for (second, expected) in [(1, [1]), (2, [1, 2]), (3, [1, 2, 3])] {
            clock.advance(by: 1)
            await eventually("after \(second) s, the waits with a limit up to it ended", { ended.withLock { $0 } == expected })
            #expect(flights.waitingCount == 3 - second)
            // A wait that missed its limit would wait for ever: stop here (its issue is recorded).
            guard ended.withLock({ $0 }) == expected else { return }
        }
        for task in waits + more + last { await task.value }
        await eventually("nothing held", { flights.heldRecords == 0 })
    }

    @Test func aFailureOfAFlightThatIsNoLongerCurrentIsIgnored() async throws {
        let flights = SingleFlight<Int>(clock: clock, configuration: .init(flightLifetime: 10))
        let started = Locked<[SingleFlight<Int>.Flight]>([])
        let join = SingleFlight<Int>.Join.wait(start: { flight in started.withLock { $0.append(flight) }; return nil })
        let first = Task { await flights.value(deadline: nil, waitLimit: 30, isUsable: { _ in false }, join: join) }
        await eventually("first flight", { started.withLock { $0.count } == 1 })
        clock.advance(by: 10)
        await eventually("the first flight timed out", { flights.waitingCount == 1 })
        let second = Task { await flights.value(deadline: nil, waitLimit: 30, isUsable: { _ in false }, join: join) }
        await eventually("second flight", { started.withLock { $0.count } == 2 })
        struct Late: Error {}
        #expect(flights.finish(try #require(started.withLock { $0.first }), with: .failure(Late())) == nil)
        #expect(flights.waitingCount == 2)
        flights.finish(try #require(started.withLock { $0.last }), with: .success(5))
        for task in [first, second] {
            guard case .value(5) = await task.value else { Issue.record("not the current flight's value"); return }
        }
    }
}
