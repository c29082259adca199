import Foundation
import SDKAuthorizationTesting
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationSignature

/// A request's age is counted on the monotonic clock while the queue is open: a wall-clock jump alone
/// never gives up a queued request.
@Suite("Signature mode: the queue's age limit and clock changes", .hangLimit)
struct SignatureQueueAgeTests {
    @Test func aWallClockThatJumpsEightDaysAheadForOneSecondGivesUpNothing() async throws {
        let fixture = try QueueFixture { _ in ServerResponse(statusCode: 503) }
        let queue = try fixture.queue(.init(backoff: RetryBackoff(minimum: 10, maximum: 60)))
        for number in 0..<3 { try await queue.enqueue(fixture.request(number), forUser: "user-\(number)") }
        _ = await queue.waitUntilIdle()
        let wall = fixture.clock.now()
        fixture.clock.setWallClock(to: wall.addingTimeInterval(8 * 86_400))
        // The app goes on queueing during that second: the sender looks at every lane then.
        try await queue.enqueue(fixture.request(3), forUser: "user-3")
        fixture.clock.advance(by: 1)
        _ = await queue.waitUntilIdle()
        fixture.clock.setWallClock(to: wall.addingTimeInterval(2))
        fixture.clock.advance(by: 60)
        #expect(await queue.waitUntilIdle() == 4, "every request is still queued")
        #expect(fixture.undeliverable.withLock { $0.isEmpty })
        await queue.close()
    }

    @Test func aWallClockSetBackDoesNotDelayTheEndOfARequestAtItsMaximumAge() async throws {
        let fixture = try QueueFixture { _ in ServerResponse(statusCode: 503) }
        let queue = try fixture.queue(.init(backoff: RetryBackoff(minimum: 10, maximum: 60), maximumAge: 3_600))
        let id = try await queue.enqueue(fixture.request(1))
        _ = await queue.waitUntilIdle()
        fixture.clock.setWallClock(to: fixture.clock.now().addingTimeInterval(-30 * 86_400))
        for _ in 0..<59 {
            fixture.clock.advance(by: 60)
            _ = await queue.waitUntilIdle()
        }
        #expect(fixture.undeliverable.withLock { $0.isEmpty }, "59 minutes old: kept")
        fixture.clock.advance(by: 60)
        #expect(await queue.waitUntilIdle() == 0)
        #expect(fixture.undeliverable.withLock { $0.map(\.id) } == [id])
        #expect(fixture.undeliverable.withLock { $0.first?.reason } == .tooOld)
        await queue.close()
    }

    @Test func aReloadedRequestKeepsTheAgeItHadAtOpeningAndAgesOnTheMonotonicClock() async throws {
        let fixture = try QueueFixture { _ in ServerResponse(statusCode: 503) }
        let options = SignatureRequestQueue.Options(backoff: RetryBackoff(minimum: 10, maximum: 60), maximumAge: 3_600)
        let queue = try fixture.queue(options)
        try await queue.enqueue(fixture.request(1))
        _ = await queue.waitUntilIdle()
        await queue.close()
        // Half an hour passes while the app is not running.
        fixture.clock.setWallClock(to: fixture.clock.now().addingTimeInterval(1_800))
        let reopened = try fixture.queue(options)
        _ = await reopened.waitUntilIdle()
        // The wall clock jumps a day ahead: ignored while the queue is open.
        fixture.clock.setWallClock(to: fixture.clock.now().addingTimeInterval(86_400))
        for _ in 0..<29 {
            fixture.clock.advance(by: 60)
            _ = await reopened.waitUntilIdle()
        }
        #expect(fixture.undeliverable.withLock { $0.isEmpty }, "59 minutes old: kept")
        fixture.clock.advance(by: 60)
        #expect(await reopened.waitUntilIdle() == 0)
        #expect(fixture.undeliverable.withLock { $0.first?.reason } == .tooOld)
        await reopened.close()
    }
}
