import Foundation
import SDKAuthorizationTesting
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationModeKit
@testable import SDKAuthorizationSignature

/// A fresh directory for one test's queue files.
func temporaryQueueDirectory() -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent("sdkauth-queue-\(UUID().uuidString)", isDirectory: true)
}

/// One queue under test: its own directory, a manual clock for the backoff, a recording transport.
/// The client's deadlines run on the system clock (60 s, never reached), so the manual clock's only
/// sleeper is the queue's backoff timer.
struct QueueFixture {
    let directory = temporaryQueueDirectory()
    let clock = ManualClock()
    let sink = RecordingDiagnosticsSink()
    let authentication: SignatureAuthentication
    let transport: RecordingTransport
    let client: AuthorizedHTTPClient
    let undeliverable = Locked<[SignatureRequestQueue.Undeliverable]>([])
    let events = Locked<[SignatureFailure]>([])
    let subscription: SignatureFailureSubscription

    init(responder: @escaping RecordingTransport.Responder = { _ in ServerResponse(statusCode: 201) }) throws {
        authentication = try SignatureAuthentication(diagnostics: sink)
        transport = RecordingTransport(responder: responder)
        client = try signatureClient(authentication, transport: transport, diagnostics: sink)
        let events = self.events
        subscription = authentication.subscribeToFailures { failure in events.withLock { $0.append(failure) } }
    }

    /// Opens the queue in boot session `boot` of the system (another one acts out a restart of the device).
    func queue(_ options: SignatureRequestQueue.Options = .init(), random: Double = 0.5, boot: String = "boot-1") throws -> SignatureRequestQueue {
        let undeliverable = self.undeliverable
        return try SignatureRequestQueue(
            name: "test", directory: directory, authentication: authentication, client: client, options: options,
            clock: clock, diagnostics: sink, random: { random }, onUndeliverable: { item in undeliverable.withLock { $0.append(item) } },
            bootSession: Array(boot.utf8)
        )
    }

    func request(_ number: Int) -> OutgoingRequest {
        OutgoingRequest(method: "POST", url: dataURL, headers: ["Content-Type": "application/json"], body: Data(#"{"request_id":"r\#(number)"}"#.utf8))
    }

    var fileURL: URL { directory.appendingPathComponent("test.queue") }

    /// The failures the subscriber received, once every failure reported so far has reached it.
    func deliveredFailures() async -> [SignatureFailure] {
        await authentication.failuresDelivered()
        return events.withLock { $0 }
    }
}

/// The request number in a body made by ``QueueFixture/request(_:)``.
func requestNumber(_ request: OutgoingRequest) -> Int? {
    guard let body = request.body, case .object(let fields)? = try? BoundedJSONReader.parse(body), let id = fields["request_id"]?.stringValue else { return nil }
    return Int(id.dropFirst())
}

@Suite("Signature mode: the durable request queue", .hangLimit)
struct SignatureRequestQueueTests {
    @Test func queuedRequestsAreSentOldestFirstWithTheirUsersSignatureAndAnIdempotencyKey() async throws {
        let fixture = try QueueFixture()
        try fixture.authentication.changeUser("user-1", signature: signature("user-1"))
        let queue = try fixture.queue()
        var ids: [UUID] = []
        for number in 0..<5 { ids.append(try await queue.enqueue(fixture.request(number))) }
        #expect(await queue.flush() == 0)
        let sent = fixture.transport.requests
        #expect(sent.compactMap(requestNumber) == [0, 1, 2, 3, 4])
        #expect(sent.map { $0.value(forHeader: "Idempotency-Key") } == ids.map(\.uuidString))
        #expect(sent.allSatisfy { $0.value(forHeader: "X-Braze-Auth-Signature") == signature("user-1") })
        await queue.close()
    }

    @Test func anEnqueuedRequestIsOnDiskWhenEnqueueReturnsAndReloadedByTheNextQueue() async throws {
        let fixture = try QueueFixture { _ in ServerResponse(statusCode: 503) }
        try fixture.authentication.changeUser("user-1", signature: signature("user-1"))
        let queue = try fixture.queue()
        let id = try await queue.enqueue(fixture.request(7))
        // Read from the file itself, not from the queue.
        let bytes = try [UInt8](Data(contentsOf: fixture.fileURL))
        let records = JournalCodec.decode(bytes).records
        #expect(records.contains { if case .entry(let entry) = $0 { entry.id == id && entry.userId == "user-1" } else { false } })
        _ = await queue.waitUntilIdle()
        await queue.close()

        let transport = RecordingTransport(statusCode: 201)
        let reopened = try SignatureRequestQueue(name: "test", directory: fixture.directory, authentication: fixture.authentication,
                                                 client: try signatureClient(fixture.authentication, transport: transport), clock: fixture.clock, diagnostics: fixture.sink)
        #expect(reopened.recovery.recoveredCount == 1)
        #expect(reopened.recovery.inDoubt == [id], "it was being sent when the first queue closed")
        #expect(await reopened.flush() == 0)
        #expect(transport.requests.map { $0.value(forHeader: "Idempotency-Key") } == [id.uuidString])
        await reopened.close()
        let after = try [UInt8](Data(contentsOf: fixture.fileURL))
        #expect(after == JournalCodec.header, "a finished queue leaves an empty journal")
    }

    @Test func queueFilesAreOwnerOnlyAndASecondQueueOnTheSameFileIsRefused() async throws {
        let fixture = try QueueFixture()
        let queue = try fixture.queue()
        try await queue.enqueue(fixture.request(1))
        let fileMode = try FileManager.default.attributesOfItem(atPath: fixture.fileURL.path)[.posixPermissions] as? Int
        let directoryMode = try FileManager.default.attributesOfItem(atPath: fixture.directory.path)[.posixPermissions] as? Int
        #expect(fileMode == 0o600)
        #expect(directoryMode == 0o700)
        #expect(throws: SignatureQueueError.queueInUse(name: "test")) { try fixture.queue() }
        await queue.close()
        let again = try fixture.queue()
        await again.close()
    }

    @Test func theDefaultDirectoryIsTheNamespacesOwnInThePlatformsApplicationDataDirectory() {
        #if canImport(Darwin)
        #expect(SignatureRequestQueue.defaultDirectory(for: .testing).path.hasSuffix("Application Support/SDKAuthorization/Queues/com.example.tests"))
        #else
        #expect(SignatureRequestQueue.defaultDirectory(for: .testing).path.hasSuffix("SDKAuthorization/queues/com.example.tests"))
        #expect(FileCredentialStore.defaultDirectory(for: .testing).path.hasSuffix("SDKAuthorization/credentials/com.example.tests"))
        #endif
    }

    @Test func aFullQueueRefusesNewRequestsAndKeepsTheOldOnes() async throws {
        let fixture = try QueueFixture { _ in ServerResponse(statusCode: 503) }
        let queue = try fixture.queue(.init(maximumEntries: 3))
        for number in 0..<3 { try await queue.enqueue(fixture.request(number)) }
        await #expect(throws: SignatureQueueError.full(maximumEntries: 3, maximumBytes: 32 << 20)) {
            try await queue.enqueue(fixture.request(3))
        }
        #expect(queue.count == 3)
        let bytesQueue = try QueueFixture { _ in ServerResponse(statusCode: 503) }
        let small = try bytesQueue.queue(.init(maximumBytes: 2_048))
        try await small.enqueue(OutgoingRequest(method: "POST", url: dataURL, body: Data(count: 1_500)))
        await #expect(throws: SignatureQueueError.full(maximumEntries: 10_000, maximumBytes: 2_048)) {
            try await small.enqueue(OutgoingRequest(method: "POST", url: dataURL, body: Data(count: 1_500)))
        }
        await queue.close()
        await small.close()
    }

    @Test func requestsTheQueueCannotKeepAndBadOptionsAreRefused() async throws {
        let fixture = try QueueFixture()
        let queue = try fixture.queue()
        let tooLarge = [
            OutgoingRequest(method: "POST", url: dataURL, body: Data(count: (1 << 20) + 1)),
            OutgoingRequest(method: "POST", url: URL(string: "https://sdk.example.com/" + String(repeating: "a", count: 9_000))!),
            OutgoingRequest(method: "POST", url: dataURL, headers: Dictionary(uniqueKeysWithValues: (0..<65).map { ("X-\($0)", "v") })),
        ]
        for request in tooLarge {
            await #expect(throws: SignatureQueueError.self) { try await queue.enqueue(request) }
        }
        await #expect(throws: SignatureQueueError.self) { try await queue.enqueue(fixture.request(1), forUser: "bad\nuser") }
        #expect(queue.count == 0)
        await queue.close()
        let badOptions: [SignatureRequestQueue.Options] = [
            .init(maximumEntries: 0), .init(maximumEntries: 1_000_001), .init(maximumBytes: 100), .init(pauseAfterAuthenticationFailures: 0),
            .init(backoff: RetryBackoff(minimum: 0)), .init(backoff: RetryBackoff(minimum: 20, maximum: 10)), .init(backoff: RetryBackoff(factor: .nan)),
            .init(backoff: RetryBackoff(jitter: 2)), .init(idempotencyHeaderName: "Bad Name"),
        ]
        for options in badOptions {
            #expect(throws: SignatureQueueError.self) { try fixture.queue(options) }
        }
        for name in ["", "../escape", "a/b", "name with space", String(repeating: "n", count: 65)] {
            #expect(throws: SignatureQueueError.invalidConfiguration("a queue name has 1 to 64 letters, digits, '-' and '_'")) {
                try SignatureRequestQueue(name: name, directory: fixture.directory, authentication: fixture.authentication, client: fixture.client)
            }
        }
    }

    @Test func backoffIsTenThirtyNinetyTwoSeventyThenThreeHundredOnTheManualClock() async throws {
        let times = Locked<[TimeInterval]>([])
        let clock = ManualClock()
        let fixture = try QueueFixture { _ in
            times.withLock { $0.append(clock.monotonicNow()) }
            return ServerResponse(statusCode: 503)
        }
        let queue = try SignatureRequestQueue(name: "test", directory: fixture.directory, authentication: fixture.authentication, client: fixture.client,
                                              clock: clock, diagnostics: fixture.sink, random: { 0.5 })
        try await queue.enqueue(fixture.request(1))
        _ = await queue.waitUntilIdle()
        for delay in [10.0, 30, 90, 270, 300, 300] {
            clock.advance(by: delay - 0.5)
            _ = await queue.waitUntilIdle()
            let before = times.withLock { $0.count }
            clock.advance(by: 0.5)
            _ = await queue.waitUntilIdle()
            #expect(times.withLock { $0.count } == before + 1, "attempt after \(delay) s")
        }
        let gaps = times.withLock { times in zip(times.dropFirst(), times).map { $0 - $1 } }
        #expect(gaps == [10, 30, 90, 270, 300, 300])
        await queue.close()
    }

    @Test func jitterSpreadsEachWaitWithinItsBoundsAndNeverBelowTheMinimum() throws {
        let backoff = try RetryBackoff().validated()
        #expect(backoff.delay(afterFailures: 1, random: 0) == 10, "never below the minimum")
        #expect(backoff.delay(afterFailures: 1, random: 1) == 12)
        #expect(backoff.delay(afterFailures: 2, random: 0) == 24)
        #expect(backoff.delay(afterFailures: 2, random: 1) == 36)
        #expect(backoff.delay(afterFailures: 50, random: 1) == 300, "never above the maximum")
        #expect(backoff.delay(afterFailures: Int.max, random: 0.5) == 300)
        let custom = RetryBackoff(minimum: 1, factor: 2, maximum: 8, jitter: 0)
        #expect((1...5).map { custom.delay(afterFailures: $0, random: 0.9) } == [1, 2, 4, 8, 8])
    }

    @Test func fiftyConsecutiveAuthenticationFailuresPauseRetriesUntilTheNextSession() async throws {
        let fixture = try QueueFixture { _ in authErrorResponse(22, user: "user-1") }
        try fixture.authentication.changeUser("user-1", signature: signature("user-1"))
        let queue = try fixture.queue()
        try await queue.enqueue(fixture.request(1))
        _ = await queue.waitUntilIdle()
        for _ in 1..<50 {
            #expect(!queue.isPaused)
            fixture.clock.advance(by: 300)
            _ = await queue.waitUntilIdle()
        }
        #expect(fixture.transport.requests.count == 50)
        #expect(queue.isPaused)
        fixture.clock.advance(by: 3_600)
        _ = await queue.waitUntilIdle()
        #expect(fixture.transport.requests.count == 50, "paused: no retry however long")
        #expect(await fixture.deliveredFailures().count == 1, "one event for the one rejected signature")
        #expect(fixture.sink.messages(at: .warning).contains { $0.contains("50 consecutive authentication failures") })

        #expect(await queue.flush() == 1, "a manual flush sends once, despite the pause")
        #expect(fixture.transport.requests.count == 51)
        queue.startSession()
        _ = await queue.waitUntilIdle()
        #expect(!queue.isPaused)
        #expect(fixture.transport.requests.count == 52, "a new session retries at once")
        await queue.close()
    }

    @Test func retriesCarryTheCurrentSignatureOfTheRequestsOwnUserNeverTheOneItFirstCarried() async throws {
        let fixture = try QueueFixture { request in
            request.value(forHeader: "X-Braze-Auth-Signature") == signature("user-1", 2) ? ServerResponse(statusCode: 201) : authErrorResponse(22, user: "user-1")
        }
        try fixture.authentication.changeUser("user-1", signature: signature("user-1"))
        let queue = try fixture.queue()
        try await queue.enqueue(fixture.request(1))
        _ = await queue.waitUntilIdle()
        #expect(await fixture.deliveredFailures() == [SignatureFailure(errorCode: .expired, reason: "code 22", userId: "user-1", signature: signature("user-1"), optional: false)])
        try fixture.authentication.changeUser("user-2", signature: signature("user-2"))
        try await queue.enqueue(fixture.request(2))
        // The new user's request goes in a lane of its own, with its own signature; the new user's
        // signature does not wake user-1's request; user-1's new one does, at once.
        _ = await queue.waitUntilIdle()
        #expect(fixture.transport.requests.compactMap(requestNumber) == [1, 2])
        try fixture.authentication.setSignature(signature("user-1", 2), for: "user-1")
        _ = await queue.waitUntilIdle()
        let sent = fixture.transport.requests
        #expect(sent.map { $0.value(forHeader: "X-Braze-Auth-Signature") } == [signature("user-1"), signature("user-2"), signature("user-1", 2)])
        #expect(sent.compactMap(requestNumber) == [1, 2, 1])
        #expect(queue.count == 1, "user-2's signature is rejected in turn")
        await queue.close()
    }

    @Test func aSignatureThatArrivesWhileTheRejectedRequestWasInFlightIsTriedAtOnce() async throws {
        let authentication = Locked<SignatureAuthentication?>(nil)
        let fixture = try QueueFixture { request in
            if request.value(forHeader: "X-Braze-Auth-Signature") == signature("user-1", 2) { return ServerResponse(statusCode: 201) }
            // The app's subscriber answers before the rejection reaches the queue.
            try authentication.withLock { $0 }?.setSignature(signature("user-1", 2), for: "user-1")
            return authErrorResponse(22, user: "user-1")
        }
        authentication.withLock { $0 = fixture.authentication }
        try fixture.authentication.changeUser("user-1", signature: signature("user-1"))
        let queue = try fixture.queue()
        try await queue.enqueue(fixture.request(1))
        #expect(await queue.waitUntilIdle() == 0, "sent again without waiting for the backoff")
        #expect(fixture.transport.requests.map { $0.value(forHeader: "X-Braze-Auth-Signature") } == [signature("user-1"), signature("user-1", 2)])
        await queue.close()
    }

    @Test func aFlushDuringASendJoinsThatPassInsteadOfRepeatingAFailedRequest() async throws {
        let (gate, open) = AsyncStream<Void>.makeStream()
        let fixture = try QueueFixture { _ in
            for await _ in gate { break }
            return authErrorResponse(22, user: "user-1")
        }
        try fixture.authentication.changeUser("user-1", signature: signature("user-1"))
        let queue = try fixture.queue()
        try await queue.enqueue(fixture.request(1))
        while fixture.transport.requests.isEmpty { await Task.yield() }
        let flush = Task { await queue.flush() }
        while queue.pendingFlushCount == 0 { await Task.yield() }
        open.yield()
        #expect(await flush.value == 1)
        _ = await queue.waitUntilIdle()
        #expect(fixture.transport.requests.count == 1, "the rejected request is not sent again at once with the same signature")
        await queue.close()
    }

    @Test func optionalEnforcementReportsTheFailureAndTheRequestCountsAsSent() async throws {
        let fixture = try QueueFixture { _ in authErrorResponse(22, user: "user-1", optional: true, status: 201) }
        try fixture.authentication.changeUser("user-1", signature: signature("user-1"))
        let queue = try fixture.queue()
        try await queue.enqueue(fixture.request(1))
        try await queue.enqueue(fixture.request(2))
        #expect(await queue.flush() == 0)
        #expect(await fixture.deliveredFailures() == [SignatureFailure(errorCode: .expired, reason: "code 22", userId: "user-1", signature: signature("user-1"), optional: true)])
        await queue.close()
    }

    @Test func aMissingSignatureIsReportedOnceWithTheRequestsUser() async throws {
        let fixture = try QueueFixture { _ in authErrorResponse(26) }
        let queue = try fixture.queue()
        try await queue.enqueue(fixture.request(1), forUser: "user-9")
        #expect(await queue.flush() == 1)
        #expect(await fixture.deliveredFailures() == [SignatureFailure(errorCode: .missingToken, reason: "code 26", userId: "user-9", signature: nil, optional: false)])
        await queue.close()
    }

    @Test func aRequestTheServerRefusesForGoodIsRemovedAndReportedNeverSilentlyDropped() async throws {
        let fixture = try QueueFixture { request in requestNumber(request) == 1 ? ServerResponse(statusCode: 400) : ServerResponse(statusCode: 201) }
        let queue = try fixture.queue()
        let refused = try await queue.enqueue(fixture.request(1))
        try await queue.enqueue(fixture.request(2))
        #expect(await queue.flush() == 0)
        let reported = fixture.undeliverable.withLock { $0 }
        #expect(reported.map(\.id) == [refused])
        #expect(reported.first?.error.statusCode == 400)
        #expect(fixture.sink.messages(at: .error).contains { $0.contains(refused.uuidString) })
        await queue.close()
    }

    @Test func transientFailuresAreRetriedAndDoNotCountTowardsThePause() async throws {
        let failures = Locked(2)
        let fixture = try QueueFixture { _ in
            failures.withLock { left in
                defer { left -= 1 }
                return left > 0 ? ServerResponse(statusCode: 503) : ServerResponse(statusCode: 201)
            }
        }
        let queue = try fixture.queue()
        try await queue.enqueue(fixture.request(1))
        _ = await queue.waitUntilIdle()
        fixture.clock.advance(by: 10)
        _ = await queue.waitUntilIdle()
        fixture.clock.advance(by: 30)
        #expect(await queue.waitUntilIdle() == 0)
        #expect(fixture.transport.requests.count == 3)
        #expect(await fixture.deliveredFailures().isEmpty)
        await queue.close()
    }

    @Test func concurrentEnqueuesShareWritesAndEveryOneIsKept() async throws {
        let fixture = try QueueFixture { _ in ServerResponse(statusCode: 503) }
        let queue = try fixture.queue()
        let ids = await withTaskGroup(of: UUID?.self) { group in
            for number in 0..<200 { group.addTask { try? await queue.enqueue(fixture.request(number)) } }
            return await group.reduce(into: Set<UUID>()) { if let id = $1 { $0.insert(id) } }
        }
        #expect(ids.count == 200)
        _ = await queue.waitUntilIdle()
        await queue.close()
        let reopened = try fixture.queue()
        #expect(reopened.recovery.recoveredCount == 200)
        #expect(reopened.count == 200)
        await reopened.close()
    }

    @Test func theSignatureIsDroppedOnARedirectToAnotherOrigin() async throws {
        let fixture = try QueueFixture { request in
            request.url.host == "sdk.example.com"
                ? ServerResponse(statusCode: 302, headers: ["Location": "https://elsewhere.example.net/data"])
                : ServerResponse(statusCode: 201)
        }
        try fixture.authentication.changeUser("user-1", signature: signature("user-1"))
        let queue = try fixture.queue()
        try await queue.enqueue(OutgoingRequest(method: "GET", url: dataURL))
        #expect(await queue.flush() == 0)
        let sent = fixture.transport.requests
        #expect(sent.count == 2)
        #expect(sent.last?.value(forHeader: "X-Braze-Auth-Signature") == nil)
        await queue.close()
    }
}

@Suite("Signature mode: recovering the queue's journal", .hangLimit)
struct RequestJournalRecoveryTests {
    func entry(_ number: Int, user: String? = "user-1") -> QueuedEntry {
        QueuedEntry(id: UUID(), enqueuedAt: Date(timeIntervalSince1970: 1_767_225_600), userId: user,
                    request: OutgoingRequest(method: "POST", url: dataURL, headers: ["Content-Type": "application/json"], body: Data(#"{"request_id":"r\#(number)"}"#.utf8)))
    }

    func open(_ directory: URL, sink: RecordingDiagnosticsSink) throws -> RequestJournalFile {
        try RequestJournalFile(directory: directory, name: "test", limits: .init(maximumEntries: 1_000, maximumBytes: 1 << 20), diagnostics: sink)
    }

    @Test func aJournalCutAtEveryByteOffsetRecoversEveryWholeEntryBeforeTheCutAndReportsTheRest() async throws {
        let entries = (0..<3).map { entry($0) }
        let records: [JournalRecord] = [.entry(entries[0]), .entry(entries[1]), .sending(entries[0].id), .done(entries[0].id), .entry(entries[2]), .sending(entries[1].id)]
        var bytes = JournalCodec.header
        var boundaries = [bytes.count]
        for record in records {
            bytes += JournalCodec.encode(record)
            boundaries.append(bytes.count)
        }
        for cut in 0...bytes.count {
            let directory = temporaryQueueDirectory()
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            try Data(bytes[0..<cut]).write(to: directory.appendingPathComponent("test.queue"))
            let sink = RecordingDiagnosticsSink()
            let journal = try open(directory, sink: sink)
            let whole = boundaries.filter { $0 <= cut }.count - 1
            // What the whole records before the cut leave live, in order.
            var live: [UUID] = []
            var inDoubt: Set<UUID> = []
            for record in records.prefix(max(whole, 0)) {
                switch record {
                case .entry(let entry): live.append(entry.id)
                case .sending(let id): inDoubt.insert(id)
                case .done(let id): live.removeAll { $0 == id }; inDoubt.remove(id)
                }
            }
            #expect(journal.count == live.count, "cut at \(cut)")
            #expect(journal.first?.id == live.first, "cut at \(cut)")
            #expect(Set(journal.recovery.inDoubt) == inDoubt.intersection(live), "cut at \(cut)")
            if cut < JournalCodec.header.count {
                #expect(journal.recovery.unrecognizedFile == (cut > 0), "cut at \(cut)")
            } else {
                let unreadable = cut - (boundaries.last { $0 <= cut } ?? 0)
                #expect(journal.recovery.unreadableBytes == unreadable, "cut at \(cut)")
                #expect(sink.messages(at: .error).contains { $0.contains("\(unreadable) bytes") } == (unreadable > 0), "cut at \(cut): reported, never silent")
            }
            let aside = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.contains(".damaged-") }
            #expect(aside.isEmpty, "cut at \(cut): a write cut short is not damage")
            await journal.close()
            // The rewritten file holds exactly the live entries.
            let reopened = try open(directory, sink: RecordingDiagnosticsSink())
            #expect(reopened.count == live.count && reopened.recovery.unreadableBytes == 0, "cut at \(cut), reopened")
            await reopened.close()
            try? FileManager.default.removeItem(at: directory)
        }
    }

    @Test func aDamagedRecordEndsRecoveryThereWhateverByteIsFlipped() async throws {
        let entries = (0..<2).map { entry($0) }
        let first = JournalCodec.header + JournalCodec.encode(.entry(entries[0]))
        let bytes = first + JournalCodec.encode(.entry(entries[1]))
        for offset in first.count..<bytes.count {
            var damaged = bytes
            damaged[offset] ^= 0x5A
            let directory = temporaryQueueDirectory()
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            try Data(damaged).write(to: directory.appendingPathComponent("test.queue"))
            let sink = RecordingDiagnosticsSink()
            let journal = try open(directory, sink: sink)
            #expect(journal.count == 1 && journal.first?.id == entries[0].id, "flipped byte \(offset)")
            #expect(journal.recovery.unreadableBytes == bytes.count - first.count, "flipped byte \(offset)")
            #expect(!sink.messages(at: .error).isEmpty)
            // Damage is kept aside before the rewrite; a length that now runs past the end reads as a cut.
            let aside = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.contains(".damaged-") }
            if let name = aside.first {
                #expect(try [UInt8](Data(contentsOf: directory.appendingPathComponent(name))) == Array(damaged[first.count...]), "flipped byte \(offset)")
            } else {
                #expect(JournalCodec.decode(damaged).tornTail, "flipped byte \(offset): damage not kept")
            }
            await journal.close()
            try? FileManager.default.removeItem(at: directory)
        }
    }

    @Test func aFileThatIsNotAJournalIsMovedAsideNeverOverwritten() async throws {
        let directory = temporaryQueueDirectory()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try Data("something else entirely".utf8).write(to: directory.appendingPathComponent("test.queue"))
        let sink = RecordingDiagnosticsSink()
        let journal = try open(directory, sink: sink)
        #expect(journal.recovery.unrecognizedFile)
        #expect(journal.count == 0)
        let aside = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix("test.queue.unrecognized-") }
        #expect(aside.count == 1)
        #expect(try Data(contentsOf: directory.appendingPathComponent(aside[0])) == Data("something else entirely".utf8))
        await journal.close()
    }

    @Test func hostileRecordsAreRefusedByTheDecoderWithoutTrapping() {
        var hostile: [[UInt8]] = []
        let valid = JournalCodec.encode(.entry(entry(1)))
        hostile.append(JournalCodec.header + [0xFF, 0xFF, 0xFF, 0xFF] + [0, 0, 0, 0])            // length beyond the file
        hostile.append(JournalCodec.header + [0, 0, 0, 0] + [0, 0, 0, 0])                         // empty record
        var lying = valid
        lying[3] = lying[3] &+ 1                                                                   // one byte longer than written
        hostile.append(JournalCodec.header + lying)
        // A checksummed body that lies about its inner lengths.
        var body: [UInt8] = [1] + Array(repeating: 0, count: 16) + Array(repeating: 0, count: 8) + [1, 0xFF, 0xFF]
        body += Array(repeating: UInt8(ascii: "a"), count: 10)
        let crc = CRC32.checksum(body)
        hostile.append(JournalCodec.header + [0, 0, 0, UInt8(body.count)] + [UInt8(crc >> 24), UInt8(truncatingIfNeeded: crc >> 16), UInt8(truncatingIfNeeded: crc >> 8), UInt8(truncatingIfNeeded: crc)] + body)
        for bytes in hostile {
            let decoded = JournalCodec.decode(bytes)
            #expect(decoded.records.isEmpty)
            // Nothing read, all of it reported: a whole record that does not decode is skipped.
            #expect(decoded.unreadableBytes(of: bytes.count) == bytes.count - JournalCodec.header.count)
        }
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926, "the standard CRC-32 check value")
    }

    @Test func everyRecordSurvivesARoundTrip() {
        let entries = [entry(1), entry(2, user: nil), QueuedEntry(id: UUID(), enqueuedAt: Date(timeIntervalSince1970: 0), userId: "ü-user",
                                                                   request: OutgoingRequest(method: "GET", url: URL(string: "https://sdk.example.com/a?b=c")!))]
        let records: [JournalRecord] = entries.map { .entry($0) } + [.sending(entries[0].id), .done(entries[1].id)]
        let bytes = records.reduce(JournalCodec.header) { $0 + JournalCodec.encode($1) }
        #expect(JournalCodec.decode(bytes).records == records)
    }
}
