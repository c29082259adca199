import Foundation
import SDKAuthorizationTesting
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationSignature

@Suite("Signature mode: the journal counts attempts", .hangLimit)
struct SignatureQueueJournalAttemptTests {
    func entry(_ number: Int, bodySize: Int = 0) -> QueuedEntry {
        QueuedEntry(id: UUID(), enqueuedAt: Date(timeIntervalSince1970: 1_767_225_600), userId: "user-1",
                    request: OutgoingRequest(method: "POST", url: dataURL, body: bodySize > 0 ? Data(count: bodySize) : Data(#"{"request_id":"r\#(number)"}"#.utf8)))
    }

    func open(_ directory: URL) throws -> RequestJournalFile {
        try RequestJournalFile(directory: directory, name: "test", limits: .init(maximumEntries: 1_000, maximumBytes: 1 << 20), diagnostics: RecordingDiagnosticsSink())
    }

    @Test func attemptsAreKeptByCompactionAndByTheRewriteAtOpening() async throws {
        let directory = try ownerOnlyQueueDirectory()
        let journal = try open(directory)
        let kept = entry(0)
        try await journal.append(kept)
        for _ in 0..<3 { try await journal.markSending(kept.id) }
        // Two large entries sent and finished: their dead records outweigh the live ones, so the file is compacted.
        for number in 1...2 {
            let large = entry(number, bodySize: 600_000)
            try await journal.append(large)
            try await journal.markSending(large.id)
            try await journal.markDone(large.id)
        }
        let fileURL = directory.appendingPathComponent("test.queue")
        #expect(try Data(contentsOf: fileURL).count < 1_000, "compacted")
        #expect(journal.attempts(of: kept.id) == 3)
        await journal.close()

        let records = JournalCodec.decode(try [UInt8](Data(contentsOf: fileURL))).records
        #expect(records == [.entry(kept), .sending(kept.id), .sending(kept.id), .sending(kept.id)])
        // A done record for an entry long gone makes the next opening rewrite the file.
        let handle = try FileHandle(forWritingTo: fileURL)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(JournalCodec.encode(.done(UUID()))))
        try handle.close()
        let reopened = try open(directory)
        #expect(reopened.attempts(of: kept.id) == 3)
        #expect(reopened.recovery.inDoubt == [kept.id])
        await reopened.close()
        #expect(JournalCodec.decode(try [UInt8](Data(contentsOf: fileURL))).records == records, "rewritten with its attempts")
        let again = try open(directory)
        #expect(again.attempts(of: kept.id) == 3)
        await again.close()
        try? FileManager.default.removeItem(at: directory)
    }

    @Test func finishingManyEntriesAtOnceIsOneWriteAndFreesTheirLane() async throws {
        let directory = try ownerOnlyQueueDirectory()
        let journal = try open(directory)
        let entries = (0..<5).map { entry($0) }
        for entry in entries { try await journal.append(entry) }
        let other = QueuedEntry(id: UUID(), enqueuedAt: Date(timeIntervalSince1970: 1_767_225_600), userId: "user-2", request: entries[0].request)
        try await journal.append(other)
        #expect(journal.ids(forUser: "user-1") == entries.map(\.id))
        #expect(journal.laneHeads.map(\.id) == [entries[0].id, other.id])
        let before = try Data(contentsOf: directory.appendingPathComponent("test.queue")).count
        try await journal.markDone(entries.map(\.id))
        #expect(journal.count == 1)
        #expect(journal.ids(forUser: "user-1").isEmpty)
        #expect(journal.laneHeads.map(\.id) == [other.id])
        let after = try Data(contentsOf: directory.appendingPathComponent("test.queue")).count
        #expect(after - before == 5 * JournalCodec.doneRecordLength)
        await journal.close()
        try? FileManager.default.removeItem(at: directory)
    }
}
