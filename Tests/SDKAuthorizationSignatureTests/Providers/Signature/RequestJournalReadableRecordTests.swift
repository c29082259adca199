import Foundation
import SDKAuthorizationTesting
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationSignature

/// The queue never writes a record its own reader refuses, and a record the reader cannot read loses
/// only itself: the requests after it are recovered.
@Suite("Signature mode: the queue writes only what it reads back, and skips what it cannot", .hangLimit)
struct RequestJournalReadableRecordTests {
    let options = SignatureRequestQueue.Options(backoff: RetryBackoff(minimum: 10, maximum: 60), maximumAge: 3_600)

    /// An entry whose record without its age mark (as the previous release wrote it) is exactly
    /// `length` bytes long, framing excluded; `mark` is then added to it.
    func entry(recordLength length: Int, at date: Date, mark: AgeMark? = nil) -> QueuedEntry {
        var headers: [String: String] = [:]
        for number in 0..<9 { headers["X-Field-\(number)"] = String(repeating: "v", count: 8_000) }
        func make(_ bodySize: Int) -> QueuedEntry {
            QueuedEntry(id: UUID(uuid: (9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9)), enqueuedAt: date, userId: nil,
                        request: OutgoingRequest(method: "POST", url: dataURL, headers: headers, body: Data(count: bodySize)), mark: nil)
        }
        let overhead = JournalCodec.encode(.entry(make(0))).count - 8
        var entry = make(length - overhead)
        entry.mark = mark
        return entry
    }

    func small(_ number: Int, at date: Date, mark: AgeMark? = nil) -> QueuedEntry {
        QueuedEntry(id: UUID(), enqueuedAt: date, userId: nil,
                    request: OutgoingRequest(method: "POST", url: dataURL, headers: ["Content-Type": "application/json"], body: Data(#"{"request_id":"r\#(number)"}"#.utf8)),
                    mark: mark)
    }

    func write(_ records: [JournalRecord], to fixture: QueueFixture) throws -> [UInt8] {
        try FileManager.default.createDirectory(at: fixture.directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let bytes = records.reduce(JournalCodec.header) { $0 + JournalCodec.encode($1) }
        try Data(bytes).write(to: fixture.fileURL)
        return bytes
    }

    func fileReadsWhole(_ fixture: QueueFixture) throws -> Bool {
        let bytes = try [UInt8](Data(contentsOf: fixture.fileURL))
        let decoded = JournalCodec.decode(bytes)
        return decoded.skipped.isEmpty && decoded.validLength == bytes.count
    }

    // MARK: Re-marking checks the length

    @Test func aRequestAtTheRecordLimitInAFileWithoutMarksSurvivesTwoRestartsWithTheRequestsAfterIt() async throws {
        let fixture = try QueueFixture { _ in ServerResponse(statusCode: 503) }
        let now = fixture.clock.now()
        // At the edge: the previous release's largest record; a mark would take it past the limit.
        let big = entry(recordLength: JournalCodec.maximumRecordLength, at: now)
        #expect(JournalCodec.encode(.entry(big)).count - 8 == JournalCodec.maximumRecordLength)
        let entries = [small(0, at: now), big, small(2, at: now), small(3, at: now)]
        _ = try write(entries.map { .entry($0) }, to: fixture)
        // The first launch after a restart of the device marks every request again.
        let first = try fixture.queue(options, boot: "boot-2")
        #expect(await first.waitUntilIdle() == 4)
        await first.close()
        #expect(try fileReadsWhole(fixture), "no record longer than the reader takes was written")
        let second = try fixture.queue(options, boot: "boot-3")
        #expect(second.recovery.recoveredCount == 4)
        #expect(second.recovery.unreadableBytes == 0)
        #expect(await second.waitUntilIdle() == 4)
        await second.close()
        #expect(try fileReadsWhole(fixture))
        #expect(fixture.undeliverable.withLock { $0.isEmpty })
    }

    @Test func aRecordOneByteUnderTheLimitWhoseMarkFitsIsMarked() async throws {
        let fixture = try QueueFixture { _ in ServerResponse(statusCode: 503) }
        let now = fixture.clock.now()
        // "boot-2" makes a 32-byte mark: a record 32 bytes under the limit takes it exactly.
        let fits = entry(recordLength: JournalCodec.maximumRecordLength - 32, at: now.addingTimeInterval(-100))
        _ = try write([.entry(fits)], to: fixture)
        let queue = try fixture.queue(options, boot: "boot-2")
        #expect(await queue.waitUntilIdle() == 1)
        await queue.close()
        let records = JournalCodec.decode(try [UInt8](Data(contentsOf: fixture.fileURL))).records
        guard case .entry(let marked)? = records.first else { Issue.record("no entry"); return }
        #expect(marked.mark?.counted == 100, "marked with the age the wall clock gave it")
        #expect(JournalCodec.encode(.entry(marked)).count - 8 == JournalCodec.maximumRecordLength)
    }

    // MARK: Marks are finite

    @Test(arguments: [
        // A mark whose wall time is at the far past; a mark at 2026 read by a wall clock at the far future.
        (-Double.greatestFiniteMagnitude, 1_767_225_600.0),
        (1_767_225_600.0, Double.greatestFiniteMagnitude),
    ])
    func aTamperedAgeMarkIsWrittenBackFiniteAndTheRequestsQueuedAfterItSurviveTheNextLaunch(markedAt: Double, openedAt: Double) async throws {
        let fixture = try QueueFixture { _ in ServerResponse(statusCode: 503) }
        let now = fixture.clock.now()
        // Each value finite, as the reader takes them; the age they add up to is not.
        let tampered = AgeMark(counted: .greatestFiniteMagnitude, wall: Date(timeIntervalSince1970: markedAt), uptime: 0, boot: Array("boot-1".utf8))
        _ = try write([.entry(small(0, at: now, mark: tampered))], to: fixture)
        fixture.clock.setWallClock(to: Date(timeIntervalSince1970: openedAt))
        let queue = try fixture.queue(options, boot: "boot-2")
        let after = [try await queue.enqueue(fixture.request(1)), try await queue.enqueue(fixture.request(2))]
        _ = await queue.waitUntilIdle()
        #expect(fixture.undeliverable.withLock { $0.map(\.reason) } == [.tooOld], "a mark that says it is ancient is taken at its word")
        await queue.close()
        #expect(try fileReadsWhole(fixture))
        let reopened = try fixture.queue(options, boot: "boot-2")
        #expect(reopened.recovery.recoveredCount == 2)
        #expect(reopened.recovery.unreadableBytes == 0)
        #expect(await reopened.waitUntilIdle() == 2)
        await reopened.close()
        _ = after
    }

    @Test func anAgeMarkIsAlwaysEncodedWithValuesTheReaderTakes() {
        let date = Date(timeIntervalSince1970: 1_767_225_600)
        for mark in [
            AgeMark(counted: .infinity, wall: date, uptime: 1, boot: []),
            AgeMark(counted: -.infinity, wall: date, uptime: 1, boot: []),
            AgeMark(counted: .nan, wall: Date(timeIntervalSince1970: .nan), uptime: .infinity, boot: []),
            AgeMark(counted: -5, wall: Date(timeIntervalSince1970: .infinity), uptime: -.infinity, boot: Array(repeating: 1, count: 80)),
        ] {
            let entry = small(0, at: date, mark: mark)
            let decoded = JournalCodec.decode(JournalCodec.header + JournalCodec.encode(.entry(entry)))
            #expect(decoded.records.count == 1 && decoded.skipped.isEmpty, "\(mark)")
            if case .entry(let read)? = decoded.records.first, let counted = read.mark?.counted {
                #expect(counted >= 0 && counted <= AgeMark.maximumCounted, "\(mark)")
            }
        }
    }

    // MARK: A record that cannot be read loses only itself

    @Test func aDamagedRecordInTheMiddleIsSkippedAndOnlyItIsLostWhicheverByteOfItsChecksumOrBodyIsFlipped() async throws {
        let date = Date(timeIntervalSince1970: 1_767_225_600)
        let entries = (0..<3).map { small($0, at: date) }
        let head = JournalCodec.header + JournalCodec.encode(.entry(entries[0]))
        let middle = JournalCodec.encode(.entry(entries[1]))
        let tail = JournalCodec.encode(.sending(entries[2].id)) + JournalCodec.encode(.entry(entries[2])) + JournalCodec.encode(.sending(entries[2].id))
        let bytes = head + middle + tail
        // From its checksum on: its length (the first 4 bytes) is what skipping it relies on.
        for offset in (head.count + 4)..<(head.count + middle.count) {
            var damaged = bytes
            damaged[offset] ^= 0x5A
            let directory = temporaryQueueDirectory()
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            try Data(damaged).write(to: directory.appendingPathComponent("test.queue"))
            let sink = RecordingDiagnosticsSink()
            let journal = try RequestJournalFile(directory: directory, name: "test", limits: .init(maximumEntries: 100, maximumBytes: 1 << 20), diagnostics: sink)
            #expect(journal.liveEntries.map(\.id) == [entries[0].id, entries[2].id], "flipped byte \(offset)")
            #expect(journal.attempts(of: entries[2].id) == 1, "flipped byte \(offset): the records after it count")
            #expect(journal.recovery.unreadableBytes == middle.count, "flipped byte \(offset)")
            #expect(journal.recovery.unreadableOffset == head.count, "flipped byte \(offset)")
            // Reported with where and why, never what it held.
            let errors = sink.messages(at: .error)
            #expect(errors.count == 1 && errors[0].contains("the record of \(middle.count) bytes at offset \(head.count)"), "flipped byte \(offset): \(errors)")
            #expect(errors.allSatisfy { !$0.contains("request_id") && !$0.contains(dataURL.host ?? "?") && !$0.contains(entries[1].id.uuidString) })
            // Kept aside for inspection, and the rewritten file reads whole.
            let aside = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.contains(".damaged-") }
            #expect(aside.count == 1)
            if let name = aside.first {
                #expect(try [UInt8](Data(contentsOf: directory.appendingPathComponent(name))) == Array(damaged[head.count..<(head.count + middle.count)]))
            }
            await journal.close()
            let reopened = try RequestJournalFile(directory: directory, name: "test", limits: .init(maximumEntries: 100, maximumBytes: 1 << 20), diagnostics: RecordingDiagnosticsSink())
            #expect(reopened.liveEntries.map(\.id) == [entries[0].id, entries[2].id] && reopened.recovery.unreadableBytes == 0, "flipped byte \(offset), reopened")
            await reopened.close()
            try? FileManager.default.removeItem(at: directory)
        }
    }

    @Test func damagedRecordsInARowAreEachSkippedAndTheRecordsAfterThemAreRecovered() {
        let date = Date(timeIntervalSince1970: 1_767_225_600)
        let entries = (0..<5).map { small($0, at: date) }
        var bytes = JournalCodec.header
        var damaged: [Int] = []
        for (index, entry) in entries.enumerated() {
            var record = JournalCodec.encode(.entry(entry))
            if (1...3).contains(index) {
                record[record.count - 1] ^= 0xFF
                damaged.append(bytes.count)
            }
            bytes += record
        }
        let decoded = JournalCodec.decode(bytes)
        #expect(decoded.records == [.entry(entries[0]), .entry(entries[4])])
        #expect(decoded.skipped.map(\.offset) == damaged)
        #expect(decoded.skipped.allSatisfy { $0.reason == "fails its checksum" })
        #expect(decoded.validLength == bytes.count)
    }

    @Test func aDamagedLengthNeverMakesUpARecordAndKeepsEverythingBeforeIt() throws {
        let date = Date(timeIntervalSince1970: 1_767_225_600)
        let entries = (0..<3).map { small($0, at: date) }
        let head = JournalCodec.header + JournalCodec.encode(.entry(entries[0]))
        let bytes = head + JournalCodec.encode(.entry(entries[1])) + JournalCodec.encode(.entry(entries[2]))
        for offset in head.count..<(head.count + 4) {
            for bit in 0..<8 {
                var damaged = bytes
                damaged[offset] ^= 1 << bit
                let decoded = JournalCodec.decode(damaged)
                let ids = decoded.records.compactMap { if case .entry(let entry) = $0 { entry.id } else { nil } }
                #expect(ids.first == entries[0].id, "byte \(offset) bit \(bit)")
                #expect(Set(ids).isSubset(of: Set(entries.map(\.id))), "byte \(offset) bit \(bit): nothing read from inside a record")
            }
        }
    }

    @Test func aRecordOverTheLimitInTheMiddleIsSkippedAndTheRequestsAfterItAreRecovered() async throws {
        let fixture = try QueueFixture { _ in ServerResponse(statusCode: 503) }
        let now = fixture.clock.now()
        // As the release before this fix wrote it: a record at the limit with a mark added.
        let mark = AgeMark(counted: 5, wall: now, uptime: 0, boot: Array("a-boot-session-of-thirty-six-bytes-x".utf8))
        let over = entry(recordLength: JournalCodec.maximumRecordLength, at: now, mark: mark)
        #expect(JournalCodec.encode(.entry(over)).count - 8 == JournalCodec.maximumRecordLength + 62)
        let before = small(0, at: now), later = [small(2, at: now), small(3, at: now)]
        let bytes = try write([.entry(before), .entry(over), .entry(later[0]), .entry(later[1])], to: fixture)
        let queue = try fixture.queue(options)
        #expect(queue.recovery.recoveredCount == 3)
        #expect(queue.recovery.unreadableBytes == JournalCodec.maximumRecordLength + 62 + 8)
        #expect(await queue.waitUntilIdle() == 3)
        #expect(fixture.sink.messages(at: .error).contains { $0.contains("is longer than the \(JournalCodec.maximumRecordLength) bytes a record may have") })
        await queue.close()
        #expect(try fileReadsWhole(fixture))
        #expect(bytes.count > 0)
    }

    // MARK: A wall clock before the release date is unknown

    @Test func requestsQueuedWhileTheDeviceClockSaid1970AreNotGivenUpAsTooOldAfterTheNextRestart() async throws {
        let fixture = try QueueFixture { _ in ServerResponse(statusCode: 503) }
        let today = fixture.clock.now()
        fixture.clock.setWallClock(to: Date(timeIntervalSince1970: 0))
        let queue = try fixture.queue(options)
        for number in 0..<5 { try await queue.enqueue(fixture.request(number)) }
        #expect(await queue.waitUntilIdle() == 5)
        await queue.close()
        // The device restarts with its clock set right.
        fixture.clock.setWallClock(to: today)
        let reopened = try fixture.queue(options, boot: "boot-2")
        #expect(await reopened.waitUntilIdle() == 5, "the time since 1970 is unknown, not an age")
        #expect(fixture.undeliverable.withLock { $0.isEmpty })
        // From the relaunch they age on the monotonic clock: kept 1 s short of the maximum age, given up at it.
        fixture.clock.advance(by: 3_599)
        #expect(await reopened.waitUntilIdle() == 5)
        fixture.clock.advance(by: 1)
        #expect(await reopened.waitUntilIdle() == 0)
        #expect(fixture.undeliverable.withLock { $0.map(\.reason) } == Array(repeating: .tooOld, count: 5))
        await reopened.close()
    }

    @Test func aWallTimeBeforeTheReleaseDateIsUnknownAndOneFromItOnIsCounted() {
        let earliest = AgeMark.earliestWallClock
        let later = earliest.addingTimeInterval(100)
        #expect(AgeMark.wallInterval(from: earliest.addingTimeInterval(-1), to: later) == 0)
        #expect(AgeMark.wallInterval(from: earliest, to: later) == 100)
        #expect(AgeMark.wallInterval(from: later, to: earliest.addingTimeInterval(-1)) == 0)
        #expect(AgeMark.wallInterval(from: earliest, to: Date(timeIntervalSince1970: .infinity)) == AgeMark.maximumCounted)
    }
}
