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

    @Test func aRequestReloadedAfterARestartOfTheDeviceKeepsTheAgeTheWallClockGivesItAndAgesOnTheMonotonicClock() async throws {
        let fixture = try QueueFixture { _ in ServerResponse(statusCode: 503) }
        let options = SignatureRequestQueue.Options(backoff: RetryBackoff(minimum: 10, maximum: 60), maximumAge: 3_600)
        let queue = try fixture.queue(options)
        try await queue.enqueue(fixture.request(1))
        _ = await queue.waitUntilIdle()
        await queue.close()
        // Half an hour passes while the app is not running and the device restarts: only the wall
        // clock can tell how long.
        fixture.clock.setWallClock(to: fixture.clock.now().addingTimeInterval(1_800))
        let reopened = try fixture.queue(options, boot: "boot-2")
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

    // MARK: Across launches

    @Test func aWallClockJumpBetweenTwoLaunchesInOneBootGivesUpNothingAndTheAgeGoesOnOnTheMonotonicClock() async throws {
        let fixture = try QueueFixture { _ in ServerResponse(statusCode: 503) }
        let options = SignatureRequestQueue.Options(backoff: RetryBackoff(minimum: 10, maximum: 60), maximumAge: 3_600)
        let queue = try fixture.queue(options)
        let id = try await queue.enqueue(fixture.request(1))
        _ = await queue.waitUntilIdle()
        fixture.clock.advance(by: 600)
        _ = await queue.waitUntilIdle()
        await queue.close()
        // The wall clock jumps eight days ahead; the app is relaunched one second later, same boot.
        fixture.clock.setWallClock(to: fixture.clock.now().addingTimeInterval(8 * 86_400))
        fixture.clock.advance(by: 1)
        let reopened = try fixture.queue(options)
        #expect(await reopened.waitUntilIdle() == 1, "not given up at the relaunch")
        #expect(fixture.undeliverable.withLock { $0.isEmpty })
        // 601 seconds counted before; 2,998 more on the monotonic clock: 3,599 seconds old, kept.
        for _ in 0..<49 {
            fixture.clock.advance(by: 60)
            _ = await reopened.waitUntilIdle()
        }
        fixture.clock.advance(by: 58)
        #expect(await reopened.waitUntilIdle() == 1, "3,599 seconds old: kept")
        fixture.clock.advance(by: 1)
        #expect(await reopened.waitUntilIdle() == 0, "3,600 seconds old on the monotonic clock: given up")
        #expect(fixture.undeliverable.withLock { $0.map(\.id) } == [id])
        #expect(fixture.undeliverable.withLock { $0.first?.reason } == .tooOld)
        await reopened.close()
    }

    @Test func theAgeCountedBeforeARestartOfTheDeviceIsPersistedSoALaterWallClockJumpDoesNotAgeTheRequest() async throws {
        let fixture = try QueueFixture { _ in ServerResponse(statusCode: 503) }
        let options = SignatureRequestQueue.Options(backoff: RetryBackoff(minimum: 10, maximum: 60), maximumAge: 3_600)
        let queue = try fixture.queue(options)
        try await queue.enqueue(fixture.request(1))
        _ = await queue.waitUntilIdle()
        fixture.clock.advance(by: 1_200)
        _ = await queue.waitUntilIdle()
        await queue.close()
        // The device restarts; the first launch in the new boot reads 1,200 s from the wall clock and
        // writes down what it counted.
        let afterRestart = try fixture.queue(options, boot: "boot-2")
        #expect(await afterRestart.waitUntilIdle() == 1)
        await afterRestart.close()
        let marks = try JournalCodec.decode(Array(Data(contentsOf: fixture.fileURL))).records.compactMap { record -> AgeMark? in
            if case .entry(let entry) = record { return entry.mark }
            return nil
        }
        #expect(marks.map(\.counted) == [1_200], "the file holds the age counted so far")
        #expect(marks.map(\.boot) == [Array("boot-2".utf8)])
        // Then, in that boot, the wall clock jumps eight days ahead before the next launch.
        fixture.clock.setWallClock(to: fixture.clock.now().addingTimeInterval(8 * 86_400))
        fixture.clock.advance(by: 60)
        let reopened = try fixture.queue(options, boot: "boot-2")
        #expect(await reopened.waitUntilIdle() == 1, "1,260 seconds old: kept")
        #expect(fixture.undeliverable.withLock { $0.isEmpty })
        await reopened.close()
    }

    @Test func aFileWrittenBeforeAgeMarksIsAgedByTheWallClockOnceThenMarked() async throws {
        let fixture = try QueueFixture { _ in ServerResponse(statusCode: 503) }
        let options = SignatureRequestQueue.Options(backoff: RetryBackoff(minimum: 10, maximum: 60), maximumAge: 3_600)
        try FileManager.default.createDirectory(at: fixture.directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let unmarked = QueuedEntry(id: UUID(), enqueuedAt: fixture.clock.now().addingTimeInterval(-1_000), userId: nil, request: fixture.request(1))
        try Data(JournalCodec.header + JournalCodec.encode(.entry(unmarked))).write(to: fixture.fileURL)
        let queue = try fixture.queue(options)
        #expect(await queue.waitUntilIdle() == 1)
        await queue.close()
        let entries = try JournalCodec.decode(Array(Data(contentsOf: fixture.fileURL))).records.compactMap { record -> QueuedEntry? in
            if case .entry(let entry) = record { return entry }
            return nil
        }
        #expect(entries.map(\.id) == [unmarked.id])
        #expect(entries.first?.mark?.counted == 1_000, "the wall clock's age, written down")
        fixture.clock.setWallClock(to: fixture.clock.now().addingTimeInterval(8 * 86_400))
        let reopened = try fixture.queue(options)
        #expect(await reopened.waitUntilIdle() == 1, "the jump after the mark is not counted")
        await reopened.close()
    }

    @Test func aRequestTooLargeForTheFilesRecordLimitIsRefusedAtEnqueueInsteadOfLostAtRelaunch() async throws {
        let fixture = try QueueFixture { _ in ServerResponse(statusCode: 503) }
        let queue = try fixture.queue(.init(backoff: RetryBackoff(minimum: 10, maximum: 60)))
        var headers = ["Content-Type": "application/json"]
        for number in 0..<20 { headers["X-Field-\(number)"] = String(repeating: "v", count: 8_000) }
        let large = OutgoingRequest(method: "POST", url: dataURL, headers: headers, body: Data(count: 1 << 20))
        do throws(SignatureQueueError) {
            try await queue.enqueue(large)
            Issue.record("a request over the record limit was queued")
        } catch {
            #expect(error.code == .entryTooLarge, "refused as too large, not as \(error.code)")
        }
        let kept = try await queue.enqueue(fixture.request(2))
        _ = await queue.waitUntilIdle()
        await queue.close()
        let reopened = try fixture.queue(.init(backoff: RetryBackoff(minimum: 10, maximum: 60)))
        #expect(reopened.recovery.recoveredCount == 1)
        #expect(reopened.recovery.unreadableBytes == 0)
        #expect(await reopened.waitUntilIdle() == 1)
        _ = kept
        await reopened.close()
    }

    /// A request whose record in the queue's file takes `padding` more bytes than the record of
    /// `request(padding: 0)`: a 1 MiB body and header fields near their limits, 8 KiB each.
    func largeRequest(padding: Int) -> OutgoingRequest {
        var headers = ["Content-Type": "application/json"]
        for number in 0..<7 { headers["X-Field-\(number)"] = String(repeating: "v", count: 8_192) }
        headers["X-Padding"] = String(repeating: "p", count: padding)
        return OutgoingRequest(method: "POST", url: dataURL, headers: headers, body: Data(count: JournalCodec.maximumBodyLength))
    }

    /// The length of the record body the queue writes for `request` (an entry and its age mark), as the
    /// reader checks it against the record limit.
    func recordLength(_ request: OutgoingRequest, clock: ManualClock) -> Int {
        let entry = QueuedEntry(id: UUID(), enqueuedAt: clock.now(), userId: nil, request: request,
                                mark: AgeMark(counted: 0, wall: clock.now(), uptime: clock.monotonicNow(), boot: Array("boot-1".utf8)))
        return JournalCodec.encode(.entry(entry)).count - 8
    }

    @Test func aRequestWhoseRecordIsExactlyTheRecordLimitIsQueuedAndReadBackAndOneByteMoreIsRefusedAsTooLarge() async throws {
        let fixture = try QueueFixture { _ in ServerResponse(statusCode: 503) }
        let options = SignatureRequestQueue.Options(backoff: RetryBackoff(minimum: 10, maximum: 60))
        let queue = try fixture.queue(options)
        let padding = JournalCodec.maximumRecordLength - recordLength(largeRequest(padding: 0), clock: fixture.clock)
        try #require((1...8_192).contains(padding), "the padding fits one header field: \(padding)")
        let atTheLimit = largeRequest(padding: padding)
        #expect(recordLength(atTheLimit, clock: fixture.clock) == JournalCodec.maximumRecordLength)
        let kept = try await queue.enqueue(atTheLimit)
        do throws(SignatureQueueError) {
            try await queue.enqueue(largeRequest(padding: padding + 1))
            Issue.record("a request one byte over the record limit was queued")
        } catch {
            #expect(error.code == .entryTooLarge, "refused as too large, not as \(error.code)")
        }
        _ = await queue.waitUntilIdle()
        await queue.close()
        // Read back whole at relaunch: the reader takes what the writer took.
        let reopened = try fixture.queue(options)
        #expect(reopened.recovery.recoveredCount == 1)
        #expect(reopened.recovery.unreadableBytes == 0)
        #expect(await reopened.waitUntilIdle() == 1)
        await reopened.close()
        let entries = JournalCodec.decode(Array(try Data(contentsOf: fixture.fileURL))).records.compactMap { record -> QueuedEntry? in
            if case .entry(let entry) = record { return entry }
            return nil
        }
        #expect(entries.map(\.id) == [kept])
        #expect(entries.first?.request.headers["X-Padding"]?.count == padding)
        #expect(entries.first?.request.body?.count == JournalCodec.maximumBodyLength)
    }

    #if os(Linux)
    @Test func theBootSessionOnLinuxIsTheKernelsBootIDTheSameAtEveryCall() {
        let session = BootSession.current()
        #expect(session.count == 36, "a UUID's text, without its newline")
        #expect(session == BootSession.current())
    }
    #endif
}
