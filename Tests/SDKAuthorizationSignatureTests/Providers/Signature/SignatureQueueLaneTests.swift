import Foundation
import SDKAuthorizationTesting
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationSignature
import SDKAuthorizationModeKit

/// The request numbers sent with `header` as their signature (`nil`: sent without one), in order.
func sentNumbers(_ transport: RecordingTransport, signedWith header: String?) -> [Int] {
    transport.requests.filter { $0.value(forHeader: "X-Braze-Auth-Signature") == header }.compactMap(requestNumber)
}

/// The monotonic times at which a responder was called, for measuring the waits between attempts.
final class AttemptTimes: Sendable {
    private let times = Locked<[TimeInterval]>([])
    let clock: ManualClock

    init(clock: ManualClock) { self.clock = clock }

    func record() { times.withLock { $0.append(clock.monotonicNow()) } }

    var count: Int { times.withLock { $0.count } }

    /// The waits between consecutive attempts.
    var gaps: [TimeInterval] { times.withLock { times in zip(times.dropFirst(), times).map { $0 - $1 } } }
}

@Suite("Signature mode: the queue's per-user lanes", .hangLimit)
struct SignatureQueueLaneTests {
    @Test func oneUsersRejectedRequestsDoNotHoldAnotherUsersRequests() async throws {
        let fixture = try QueueFixture { request in
            request.value(forHeader: "X-Braze-Auth-Signature") == signature("user-a") ? authErrorResponse(22, user: "user-a") : ServerResponse(statusCode: 201)
        }
        try fixture.authentication.changeUser("user-a", signature: signature("user-a"))
        try fixture.authentication.changeUser("user-b", signature: signature("user-b"))
        let queue = try fixture.queue()
        for number in 0..<3 { try await queue.enqueue(fixture.request(number), forUser: "user-a") }
        for number in 10..<13 { try await queue.enqueue(fixture.request(number), forUser: "user-b") }
        #expect(await queue.waitUntilIdle() == 3, "user-b's requests are sent; user-a's wait")
        #expect(sentNumbers(fixture.transport, signedWith: signature("user-b")) == [10, 11, 12], "promptly: no backoff waited for")
        for _ in 0..<4 {
            fixture.clock.advance(by: 300)
            _ = await queue.waitUntilIdle()
        }
        let rejected = sentNumbers(fixture.transport, signedWith: signature("user-a"))
        #expect(rejected.count == 5 && rejected.allSatisfy { $0 == 0 }, "user-a's oldest request is retried alone, its later ones wait behind it: \(rejected)")
        #expect(queue.count == 3)
        await queue.close()
    }

    @Test func aNewSignatureRetriesThatUsersLaneAtOnceInOrder() async throws {
        let fixture = try QueueFixture { request in
            request.value(forHeader: "X-Braze-Auth-Signature") == signature("user-a") ? authErrorResponse(22, user: "user-a") : ServerResponse(statusCode: 201)
        }
        try fixture.authentication.changeUser("user-a", signature: signature("user-a"))
        try fixture.authentication.changeUser("user-b", signature: signature("user-b"))
        let queue = try fixture.queue()
        for number in 0..<3 { try await queue.enqueue(fixture.request(number), forUser: "user-a") }
        try await queue.enqueue(fixture.request(10), forUser: "user-b")
        #expect(await queue.waitUntilIdle() == 3)
        try fixture.authentication.setSignature(signature("user-a", 2), for: "user-a")
        #expect(await queue.waitUntilIdle() == 0, "no backoff waited for")
        #expect(sentNumbers(fixture.transport, signedWith: signature("user-a", 2)) == [0, 1, 2])
        await queue.close()
    }

    @Test func aUserWhoseSignaturesKeepFailingPausesOnlyThatUsersRequests() async throws {
        let fixture = try QueueFixture { request in
            request.value(forHeader: "X-Braze-Auth-Signature") == signature("user-a") ? authErrorResponse(22, user: "user-a") : ServerResponse(statusCode: 201)
        }
        try fixture.authentication.changeUser("user-a", signature: signature("user-a"))
        try fixture.authentication.changeUser("user-b", signature: signature("user-b"))
        let queue = try fixture.queue(.init(pauseAfterAuthenticationFailures: 3))
        try await queue.enqueue(fixture.request(0), forUser: "user-a")
        _ = await queue.waitUntilIdle()
        for _ in 0..<2 {
            fixture.clock.advance(by: 300)
            _ = await queue.waitUntilIdle()
        }
        #expect(queue.isPaused)
        #expect(fixture.sink.messages(at: .warning).contains { $0.contains("3 consecutive authentication failures") })
        try await queue.enqueue(fixture.request(10), forUser: "user-b")
        try await queue.enqueue(fixture.request(11), forUser: "user-b")
        #expect(await queue.waitUntilIdle() == 1, "user-b's requests go while user-a's are paused")
        #expect(sentNumbers(fixture.transport, signedWith: signature("user-b")) == [10, 11])
        fixture.clock.advance(by: 3_600)
        _ = await queue.waitUntilIdle()
        #expect(sentNumbers(fixture.transport, signedWith: signature("user-a")) == [0, 0, 0], "user-a stays paused however long")
        queue.startSession()
        _ = await queue.waitUntilIdle()
        #expect(sentNumbers(fixture.transport, signedWith: signature("user-a")).count == 4, "a new session retries user-a at once")
        await queue.close()
    }

    @Test func anonymousRequestsAreALaneOfTheirOwn() async throws {
        let fixture = try QueueFixture { request in
            request.value(forHeader: "X-Braze-Auth-Signature") == nil ? ServerResponse(statusCode: 503) : ServerResponse(statusCode: 201)
        }
        try fixture.authentication.changeUser("user-b", signature: signature("user-b"))
        let queue = try fixture.queue()
        try await queue.enqueue(fixture.request(0), forUser: nil)
        try await queue.enqueue(fixture.request(1), forUser: nil)
        try await queue.enqueue(fixture.request(10), forUser: "user-b")
        #expect(await queue.waitUntilIdle() == 2)
        #expect(sentNumbers(fixture.transport, signedWith: signature("user-b")) == [10])
        #expect(sentNumbers(fixture.transport, signedWith: nil) == [0])
        await queue.close()
    }

    @Test func whileEveryLaneIsHealthyRequestsGoOldestFirstAcrossUsers() async throws {
        let fixture = try QueueFixture()
        try fixture.authentication.changeUser("user-a", signature: signature("user-a"))
        try fixture.authentication.changeUser("user-b", signature: signature("user-b"))
        let queue = try fixture.queue()
        try await queue.enqueue(fixture.request(0), forUser: "user-a")
        try await queue.enqueue(fixture.request(1), forUser: "user-b")
        try await queue.enqueue(fixture.request(2), forUser: nil)
        try await queue.enqueue(fixture.request(3), forUser: "user-a")
        #expect(await queue.flush() == 0)
        #expect(fixture.transport.requests.compactMap(requestNumber) == [0, 1, 2, 3])
        await queue.close()
    }

    @Test func aFlushSendsEveryLaneDespiteItsBackoffUntilARequestFails() async throws {
        let failing = Locked(true)
        let fixture = try QueueFixture { _ in failing.withLock { $0 } ? ServerResponse(statusCode: 503) : ServerResponse(statusCode: 201) }
        try fixture.authentication.changeUser("user-a", signature: signature("user-a"))
        try fixture.authentication.changeUser("user-b", signature: signature("user-b"))
        let queue = try fixture.queue()
        try await queue.enqueue(fixture.request(0), forUser: "user-a")
        try await queue.enqueue(fixture.request(1), forUser: "user-b")
        #expect(await queue.waitUntilIdle() == 2, "both lanes back off")
        failing.withLock { $0 = false }
        #expect(await queue.flush() == 0, "the flush ignores both lanes' backoff")
        #expect(fixture.transport.requests.compactMap(requestNumber) == [0, 1, 0, 1])
        await queue.close()
    }
}

@Suite("Signature mode: queued requests of a user without a signature", .hangLimit)
struct SignatureQueueUnsignedTests {
    /// Queues `users`' requests in a queue whose server is down, closes it, and "relaunches": a new
    /// signature mode (signatures live in memory only) whose current user is `current`, and a queue
    /// on the same file whose server requires a signature.
    func relaunch(queued users: [(String?, Int)], current: String, rejectUnsigned: ServerResponse = authErrorResponse(26))
        async throws -> (queue: SignatureRequestQueue, authentication: SignatureAuthentication, transport: RecordingTransport, events: Locked<[SignatureFailure]>, subscription: SignatureFailureSubscription, clock: ManualClock) {
        let before = try QueueFixture { _ in ServerResponse(statusCode: 503) }
        for case let (user?, _) in users { try before.authentication.setSignature(signature(user), for: user) }
        let first = try before.queue()
        for (user, number) in users { try await first.enqueue(before.request(number), forUser: user) }
        _ = await first.waitUntilIdle()
        await first.close()

        let authentication = try SignatureAuthentication(diagnostics: before.sink)
        try authentication.changeUser(current, signature: signature(current))
        let events = Locked<[SignatureFailure]>([])
        let subscription = authentication.subscribeToFailures { failure in events.withLock { $0.append(failure) } }
        let transport = RecordingTransport { request in
            request.value(forHeader: "X-Braze-Auth-Signature") == nil ? rejectUnsigned : ServerResponse(statusCode: 201)
        }
        let queue = try SignatureRequestQueue(name: "test", directory: before.directory, authentication: authentication,
                                              client: try signatureClient(authentication, transport: transport), clock: before.clock, diagnostics: before.sink)
        return (queue, authentication, transport, events, subscription, before.clock)
    }

    @Test func aRequestOfAUserWithoutASignatureAfterARelaunchIsReportedOnceAndHoldsOnlyItsOwnLane() async throws {
        let relaunched = try await relaunch(queued: [("user-a", 0), ("user-a", 1)], current: "user-b")
        let queue = relaunched.queue
        try await queue.enqueue(OutgoingRequest(method: "POST", url: dataURL, body: Data(#"{"request_id":"r10"}"#.utf8)))
        #expect(await queue.waitUntilIdle() == 2)
        #expect(sentNumbers(relaunched.transport, signedWith: signature("user-b")) == [10], "the current user's request is not held")
        await relaunched.authentication.failuresDelivered()
        #expect(relaunched.events.withLock { $0 } == [SignatureFailure(errorCode: .missingToken, reason: "code 26", userId: "user-a", signature: nil, optional: false)])
        for _ in 0..<5 {
            relaunched.clock.advance(by: 3_600)
            _ = await queue.waitUntilIdle()
        }
        #expect(sentNumbers(relaunched.transport, signedWith: nil) == [0], "sent unsigned once, not over and over")
        await relaunched.authentication.failuresDelivered()
        #expect(relaunched.events.withLock { $0.count } == 1, "reported once")

        try relaunched.authentication.setSignature(signature("user-a"), for: "user-a")
        #expect(await queue.waitUntilIdle() == 0, "a signature for user-a sends its requests at once")
        #expect(sentNumbers(relaunched.transport, signedWith: signature("user-a")) == [0, 1])
        await queue.close()
        _ = relaunched.subscription
    }

    @Test func anUnsignedRequestRejectedWithoutAnAuthErrorBodyIsStillReportedAsAMissingSignature() async throws {
        let relaunched = try await relaunch(queued: [("user-a", 0)], current: "user-b", rejectUnsigned: ServerResponse(statusCode: 401))
        let queue = relaunched.queue
        #expect(await queue.waitUntilIdle() == 1)
        await relaunched.authentication.failuresDelivered()
        let events = relaunched.events.withLock { $0 }
        #expect(events.count == 1)
        #expect(events.first?.errorCode == .missingToken && events.first?.userId == "user-a" && events.first?.signature == nil)
        try relaunched.authentication.setSignature(signature("user-a"), for: "user-a")
        #expect(await queue.waitUntilIdle() == 0)
        await queue.close()
        _ = relaunched.subscription
    }
}

@Suite("Signature mode: the queue honours Retry-After", .hangLimit)
struct SignatureQueueRetryAfterTests {
    /// The waits between attempts of one request answered `status` with `headers` `failures` times, then 201.
    func gaps(status: Int = 503, headers: [String: String], failures: Int = 1, advancing steps: [TimeInterval]) async throws -> [TimeInterval] {
        let clock = ManualClock()
        let times = AttemptTimes(clock: clock)
        let left = Locked(failures)
        let fixture = try QueueFixture { _ in
            times.record()
            return left.withLock { left in
                defer { left -= 1 }
                return left > 0 ? ServerResponse(statusCode: status, headers: headers) : ServerResponse(statusCode: 201)
            }
        }
        try fixture.authentication.changeUser("user-1", signature: signature("user-1"))
        let queue = try SignatureRequestQueue(name: "test", directory: fixture.directory, authentication: fixture.authentication, client: fixture.client,
                                              clock: clock, diagnostics: fixture.sink, random: { 0.5 })
        try await queue.enqueue(fixture.request(1))
        _ = await queue.waitUntilIdle()
        for step in steps {
            clock.advance(by: step)
            _ = await queue.waitUntilIdle()
        }
        await queue.close()
        return times.gaps
    }

    /// Steps of 0.5 s, then 1 s up to `limit`: the attempt comes at the first step past its wait.
    func steps(upTo limit: TimeInterval) -> [TimeInterval] {
        [0.5, 0.5] + Array(repeating: 1, count: Int(limit) - 1)
    }

    @Test func retryAfterInSecondsIsTheLanesNextAttempt() async throws {
        #expect(try await gaps(headers: ["Retry-After": "120"], advancing: steps(upTo: 130)) == [120])
        #expect(try await gaps(status: 429, headers: ["retry-after": "45"], advancing: steps(upTo: 50)) == [45], "the field name in any case")
    }

    @Test func retryAfterAsAnHTTPDateIsReadOnTheClocksWallTime() async throws {
        // ManualClock's wall time starts at Thursday 2026-01-01 00:00:00 UTC.
        #expect(try await gaps(status: 429, headers: ["RETRY-AFTER": "Thu, 01 Jan 2026 00:03:20 GMT"], advancing: steps(upTo: 210)) == [200])
        #expect(try await gaps(headers: ["Retry-After": "Thursday, 01-Jan-26 00:01:40 GMT"], advancing: steps(upTo: 110)) == [100], "RFC 850")
        #expect(try await gaps(headers: ["Retry-After": "Thu Jan  1 00:01:10 2026"], advancing: steps(upTo: 80)) == [70], "asctime")
    }

    @Test func aRetryAfterLongerThanAnHourIsCappedAtAnHour() async throws {
        for value in ["7200", "99999999999999999999999999999999999999", "Fri, 31 Dec 9999 23:59:59 GMT"] {
            #expect(try await gaps(headers: ["Retry-After": value], advancing: [3_599, 1]) == [3_600], "\(value)")
        }
    }

    @Test func aRetryAfterShorterThanTheBackoffMinimumWaitsTheMinimum() async throws {
        for value in ["0", "3", "Wed, 31 Dec 2025 23:00:00 GMT"] {
            #expect(try await gaps(headers: ["Retry-After": value], advancing: [9.5, 0.5]) == [10], "\(value): a server cannot make the queue spin")
        }
    }

    @Test func aMalformedRetryAfterFallsBackToTheBackoff() async throws {
        let malformed = ["soon", "-5", "12abc", "", " ", "1e3", "12.5", "+7", "Thu, 32 Jan 2026 00:00:00 GMT", "Thu, 01 Foo 2026 00:00:00 GMT",
                         "Thu, 01 Jan 2026 25:00:00 GMT", "Thu, 01 Jan 2026 00:00:00 PST", String(repeating: "9", count: 10_000) + "x"]
        for value in malformed {
            #expect(try await gaps(headers: ["Retry-After": value], advancing: [9.5, 0.5]) == [10], "\(value.prefix(40))")
        }
    }

    @Test func anAuthenticationFailureWithRetryAfterWaitsForItEvenWhenANewSignatureArrives() async throws {
        let clock = ManualClock()
        let times = AttemptTimes(clock: clock)
        let fixture = try QueueFixture { request in
            times.record()
            guard request.value(forHeader: "X-Braze-Auth-Signature") == signature("user-1") else { return ServerResponse(statusCode: 201) }
            var response = authErrorResponse(22, user: "user-1")
            response.headers["Retry-After"] = "60"
            return response
        }
        try fixture.authentication.changeUser("user-1", signature: signature("user-1"))
        let queue = try SignatureRequestQueue(name: "test", directory: fixture.directory, authentication: fixture.authentication, client: fixture.client,
                                              clock: clock, diagnostics: fixture.sink, random: { 0.5 })
        try await queue.enqueue(fixture.request(1))
        _ = await queue.waitUntilIdle()
        try fixture.authentication.setSignature(signature("user-1", 2), for: "user-1")
        _ = await queue.waitUntilIdle()
        #expect(times.count == 1, "the server asked for 60 s")
        clock.advance(by: 60)
        #expect(await queue.waitUntilIdle() == 0)
        #expect(times.gaps == [60])
        await queue.close()
    }
}
