import Foundation
import SDKAuthorizationTesting
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationSignature
import SDKAuthorizationModeKit

@Suite("Signature mode: the queue's attempt and age limits", .hangLimit)
struct SignatureQueueLimitTests {
    @Test func aRequestTheServerKeepsFailingIsDroppedAtItsAttemptLimitAndReported() async throws {
        let fixture = try QueueFixture { _ in ServerResponse(statusCode: 500) }
        try fixture.authentication.changeUser("user-1", signature: signature("user-1"))
        let queue = try fixture.queue(.init(maximumAttempts: 3))
        let first = try await queue.enqueue(fixture.request(1))
        let second = try await queue.enqueue(fixture.request(2))
        _ = await queue.waitUntilIdle()
        for wait in [10.0, 30] {
            fixture.clock.advance(by: wait)
            _ = await queue.waitUntilIdle()
        }
        #expect(fixture.transport.requests.compactMap(requestNumber) == [1, 1, 1])
        let reported = fixture.undeliverable.withLock { $0 }
        #expect(reported.map(\.id) == [first])
        #expect(reported.first?.reason == .tooManyAttempts)
        #expect(reported.first?.error.statusCode == 500, "its last failure")
        #expect(reported.first?.userId == "user-1")
        let errors = fixture.sink.messages(at: .error)
        #expect(errors.contains { $0.contains(first.uuidString) && $0.contains("3 attempts") })
        #expect(!errors.joined().contains(signature("user-1")), "no signature in the log")
        #expect(queue.count == 1)
        fixture.clock.advance(by: 90)
        _ = await queue.waitUntilIdle()
        #expect(fixture.transport.requests.compactMap(requestNumber).last == 2, "the user's next request has attempts of its own")
        await queue.close()
        let reopened = try fixture.queue(.init(maximumAttempts: 3))
        #expect(reopened.recovery.recoveredCount == 1, "dropped in the file, not only in memory")
        await reopened.close()
        _ = second
    }

    @Test func attemptsSurviveARelaunch() async throws {
        let fixture = try QueueFixture { _ in ServerResponse(statusCode: 500) }
        try fixture.authentication.changeUser("user-1", signature: signature("user-1"))
        let queue = try fixture.queue(.init(maximumAttempts: 3))
        let id = try await queue.enqueue(fixture.request(1))
        _ = await queue.waitUntilIdle()
        fixture.clock.advance(by: 10)
        _ = await queue.waitUntilIdle()
        #expect(fixture.transport.requests.count == 2)
        await queue.close()

        let reopened = try fixture.queue(.init(maximumAttempts: 3))
        #expect(await reopened.waitUntilIdle() == 0, "the third attempt is its last")
        #expect(fixture.transport.requests.count == 3)
        #expect(fixture.undeliverable.withLock { $0.map(\.id) } == [id])
        #expect(fixture.undeliverable.withLock { $0.map(\.reason) } == [.tooManyAttempts])
        await reopened.close()
    }

    @Test func attemptsThatGotNoAnswerDoNotCountTowardsTheLimit() async throws {
        let unanswered = Locked(5)
        let fixture = try QueueFixture { _ in
            if unanswered.withLock({ left in defer { left -= 1 }; return left > 0 }) { throw URLError(.notConnectedToInternet) }
            return ServerResponse(statusCode: 500)
        }
        let queue = try fixture.queue(.init(maximumAttempts: 2))
        try await queue.enqueue(fixture.request(1))
        _ = await queue.waitUntilIdle()
        while fixture.undeliverable.withLock({ $0.isEmpty }), fixture.transport.requests.count < 20 {
            fixture.clock.advance(by: 300)
            _ = await queue.waitUntilIdle()
        }
        #expect(fixture.transport.requests.count == 7, "five attempts with no answer (offline), then two answered")
        #expect(fixture.undeliverable.withLock { $0.map(\.reason) } == [.tooManyAttempts])
        await queue.close()
    }

    @Test func aRequestWaitingForASignatureIsStillDroppedAtItsMaximumAge() async throws {
        let fixture = try QueueFixture { request in
            request.value(forHeader: "X-Braze-Auth-Signature") == nil ? authErrorResponse(26) : ServerResponse(statusCode: 201)
        }
        let queue = try fixture.queue(.init(maximumAge: 3_600))
        let id = try await queue.enqueue(fixture.request(1), forUser: "user-without-signature")
        #expect(await queue.waitUntilIdle() == 1)
        fixture.clock.advance(by: 3_599)
        #expect(await queue.waitUntilIdle() == 1)
        fixture.clock.advance(by: 1)
        #expect(await queue.waitUntilIdle() == 0)
        #expect(fixture.transport.requests.count == 1, "sent unsigned once")
        let reported = fixture.undeliverable.withLock { $0 }
        #expect(reported.map(\.id) == [id])
        #expect(reported.first?.reason == .tooOld)
        #expect(reported.first?.error.code == .deadlineExceeded)
        #expect(reported.first?.error.statusCode == 401, "with the response of its last failure")
        #expect((reported.first?.error.underlyingError as? RequestError)?.code == .authorizationRejected)
        #expect(fixture.sink.messages(at: .error).contains { $0.contains(id.uuidString) && $0.contains("maximum age") })
        await queue.close()
    }

    @Test func aRequestFoundTooOldAtRelaunchIsDroppedWithoutBeingSent() async throws {
        let fixture = try QueueFixture { _ in ServerResponse(statusCode: 503) }
        let queue = try fixture.queue()
        let id = try await queue.enqueue(fixture.request(1))
        _ = await queue.waitUntilIdle()
        await queue.close()
        // Seven days pass on the wall clock while the app is not running and the device restarts
        // (the monotonic clock restarts, so only the wall clock can tell).
        fixture.clock.setWallClock(to: fixture.clock.now().addingTimeInterval(7 * 86_400))
        let reopened = try fixture.queue(boot: "boot-2")
        #expect(await reopened.waitUntilIdle() == 0)
        #expect(fixture.transport.requests.count == 1, "not sent again")
        #expect(fixture.undeliverable.withLock { $0.map(\.id) } == [id])
        #expect(fixture.undeliverable.withLock { $0.first?.reason } == .tooOld)
        await reopened.close()
    }

    @Test func limitsOutOfRangeAreRefusedWithAMessageEach() throws {
        let fixture = try QueueFixture()
        let attempts = SignatureQueueError.invalidConfiguration("maximumAttempts must be from 1 to 1000")
        for value in [0, -1, 1_001] {
            #expect(throws: attempts, "\(value)") { try fixture.queue(.init(maximumAttempts: value)) }
        }
        let age = SignatureQueueError.invalidConfiguration("maximumAge must be from 60 seconds to 365 days")
        for value in [0, 59, -1, 365 * 86_400 + 1, .nan, .infinity, -.infinity] as [TimeInterval] {
            #expect(throws: age, "\(value)") { try fixture.queue(.init(maximumAge: value)) }
        }
        #expect(SignatureRequestQueue.Options().maximumAttempts == 100)
        #expect(SignatureRequestQueue.Options().maximumAge == 7 * 86_400)
    }
}

@Suite("Signature mode: removing a user's queued requests", .hangLimit)
struct SignatureQueueRemovalTests {
    @Test func removingAUsersRequestsDropsThemDurablyAndKeepsOtherUsersRequests() async throws {
        let fixture = try QueueFixture { _ in ServerResponse(statusCode: 503) }
        try fixture.authentication.changeUser("user-a", signature: signature("user-a"))
        try fixture.authentication.changeUser("user-b", signature: signature("user-b"))
        let queue = try fixture.queue()
        for number in 0..<3 { try await queue.enqueue(fixture.request(number), forUser: "user-a") }
        let kept = [try await queue.enqueue(fixture.request(10), forUser: "user-b"), try await queue.enqueue(fixture.request(20), forUser: nil)]
        _ = await queue.waitUntilIdle()
        #expect(try await queue.removeRequests(forUser: "user-a") == 3)
        #expect(try await queue.removeRequests(forUser: "user-a") == 0)
        #expect(queue.count == 2)
        let sentBefore = fixture.transport.requests.count
        for _ in 0..<5 {
            fixture.clock.advance(by: 300)
            _ = await queue.waitUntilIdle()
        }
        let sentAfter = fixture.transport.requests.dropFirst(sentBefore)
        #expect(!sentAfter.isEmpty && sentAfter.allSatisfy { $0.value(forHeader: "X-Braze-Auth-Signature") != signature("user-a") }, "never sent afterwards")
        #expect(fixture.undeliverable.withLock { $0.isEmpty }, "removed by the app: not reported as undeliverable")
        await queue.close()

        let reopened = try fixture.queue()
        #expect(reopened.recovery.recoveredCount == 2, "removed in the file")
        await reopened.close()
        let bytes = try [UInt8](Data(contentsOf: fixture.fileURL))
        let entries = JournalCodec.decode(bytes).records.compactMap { if case .entry(let entry) = $0 { entry.id } else { nil } }
        #expect(entries == kept)
    }

    @Test func anonymousRequestsAreRemovedWithANilUser() async throws {
        let fixture = try QueueFixture { _ in ServerResponse(statusCode: 503) }
        let queue = try fixture.queue()
        try await queue.enqueue(fixture.request(0), forUser: nil)
        try await queue.enqueue(fixture.request(1), forUser: "user-a")
        #expect(try await queue.removeRequests(forUser: nil) == 1)
        #expect(queue.count == 1)
        await queue.close()
        await #expect(throws: SignatureQueueError.closed) { try await queue.removeRequests(forUser: "user-a") }
    }

    @Test func aRequestBeingSentWhenItsUserIsRemovedMayFinishButIsNotRetried() async throws {
        let (gate, open) = AsyncStream<Void>.makeStream()
        let fixture = try QueueFixture { _ in
            for await _ in gate { break }
            return ServerResponse(statusCode: 503)
        }
        try fixture.authentication.changeUser("user-a", signature: signature("user-a"))
        let queue = try fixture.queue()
        try await queue.enqueue(fixture.request(0))
        while fixture.transport.requests.isEmpty { await Task.yield() }
        #expect(try await queue.removeRequests(forUser: "user-a") == 1, "the request being sent counts")
        open.yield()
        #expect(await queue.waitUntilIdle() == 0)
        for _ in 0..<3 {
            fixture.clock.advance(by: 300)
            _ = await queue.waitUntilIdle()
        }
        #expect(fixture.transport.requests.count == 1, "its failure is not retried")
        await queue.close()
        let reopened = try fixture.queue()
        #expect(reopened.recovery.recoveredCount == 0)
        await reopened.close()
    }
}
