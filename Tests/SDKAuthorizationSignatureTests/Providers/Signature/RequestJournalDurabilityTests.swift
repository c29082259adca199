import Foundation
import SDKAuthorizationTesting
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationSignature
import SDKAuthorizationModeKit
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A fresh owner-only directory for one test's queue files.
func ownerOnlyQueueDirectory() throws -> URL {
    let directory = temporaryQueueDirectory()
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    return directory
}

/// A `write(2)` that, once armed, writes only the first `cut` bytes it is given and then fails with
/// `ENOSPC`, the way a write meets a full disk; every other call writes as usual.
final class CuttingWriter: Sendable {
    private let cut = Locked<Int?>(nil)
    private let failNext = Locked(false)

    func arm(cutAfter bytes: Int) { cut.withLock { $0 = bytes } }

    var writer: RequestJournalFile.Writer {
        RequestJournalFile.Writer { descriptor, buffer, count in
            if self.failNext.withLock({ fail in defer { fail = false }; return fail }) {
                errno = ENOSPC
                return -1
            }
            guard let limit = self.cut.withLock({ cut in defer { cut = nil }; return cut }) else { return write(descriptor, buffer, count) }
            guard limit > 0 else {
                errno = ENOSPC
                return -1
            }
            let written = write(descriptor, buffer, min(limit, count))
            if written > 0, limit < count { self.failNext.withLock { $0 = true } }
            return written
        }
    }
}

@Suite("Signature mode: the queue's journal on a full disk", .hangLimit)
struct RequestJournalDurabilityTests {
    func entry(_ number: Int) -> QueuedEntry {
        QueuedEntry(id: UUID(), enqueuedAt: Date(timeIntervalSince1970: 1_767_225_600), userId: "user-1",
                    request: OutgoingRequest(method: "POST", url: dataURL, headers: ["Content-Type": "application/json"], body: Data(#"{"request_id":"r\#(number)"}"#.utf8)))
    }

    func open(_ directory: URL, writer: RequestJournalFile.Writer = .system, sink: RecordingDiagnosticsSink = RecordingDiagnosticsSink()) throws(SignatureQueueError) -> RequestJournalFile {
        try RequestJournalFile(directory: directory, name: "test", limits: .init(maximumEntries: 1_000, maximumBytes: 1 << 20), diagnostics: sink, writer: writer)
    }

    /// The entry IDs the journal file holds, in order, read from the file itself.
    func entryIDs(in directory: URL) throws -> [UUID] {
        let bytes = try [UInt8](Data(contentsOf: directory.appendingPathComponent("test.queue")))
        return JournalCodec.decode(bytes).records.compactMap { if case .entry(let entry) = $0 { entry.id } else { nil } }
    }

    // MARK: A write cut short

    @Test func anAppendCutAtEveryByteOffsetThrowsAndLaterAppendsAndDoneMarksAreAllRecovered() async throws {
        let recordLength = JournalCodec.encode(.entry(entry(1))).count
        for cut in 0..<recordLength {
            let directory = try ownerOnlyQueueDirectory()
            let cutting = CuttingWriter()
            let journal = try open(directory, writer: cutting.writer)
            let acknowledged = entry(0)
            try await journal.append(acknowledged)
            cutting.arm(cutAfter: cut)
            await #expect(throws: SignatureQueueError.self, "cut at \(cut): a failed append is reported") { try await journal.append(entry(1)) }
            #expect(journal.count == 1, "cut at \(cut)")
            let later = [entry(2), entry(3)]
            try await journal.append(later[0])
            try await journal.markSending(acknowledged.id)
            try await journal.markDone(acknowledged.id)
            try await journal.append(later[1])
            await journal.close()

            let sink = RecordingDiagnosticsSink()
            let reopened = try open(directory, sink: sink)
            #expect(reopened.count == 2, "cut at \(cut): both later entries, and the done mark, are read")
            #expect(reopened.first?.id == later[0].id, "cut at \(cut)")
            #expect(reopened.recovery.unreadableBytes == 0, "cut at \(cut): the torn record was cut away before the next append")
            #expect(sink.messages(at: .error).isEmpty, "cut at \(cut)")
            await reopened.close()
            #expect(try entryIDs(in: directory) == later.map(\.id), "cut at \(cut)")
            let aside = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.contains(".damaged-") }
            #expect(aside.isEmpty, "cut at \(cut): nothing acknowledged is moved aside")
            try? FileManager.default.removeItem(at: directory)
        }
    }

    #if os(Linux)
    /// Runs ``childProcessEnqueuesUntilTheFileSizeLimitRefusesThenMoreAfterItIsRaised()`` in a child
    /// process, whose file-size limit (`RLIMIT_FSIZE`) stands in for a full disk without touching
    /// this process's limit, then reopens the queue here.
    @Test func aFullDiskMakesEnqueueThrowAndEveryAcknowledgedRequestIsRecovered() async throws {
        let directory = try ownerOnlyQueueDirectory()
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/proc/self/exe")
        child.arguments = ["--testing-library", "swift-testing", "--filter", "childProcessEnqueuesUntilTheFileSizeLimitRefuses"]
        var environment = ProcessInfo.processInfo.environment
        environment[Self.childDirectoryVariable] = directory.path
        child.environment = environment
        let output = Pipe()
        child.standardOutput = output
        child.standardError = output
        try child.run()
        let transcript = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        child.waitUntilExit()
        #expect(child.terminationStatus == 0, "the child's run:\n\(transcript)")

        let report = try String(contentsOf: directory.appendingPathComponent("acknowledged.txt"), encoding: .utf8)
        let parts = report.split(separator: "|", omittingEmptySubsequences: false).map { $0.split(separator: ",").compactMap { UUID(uuidString: String($0)) } }
        try #require(parts.count == 2)
        #expect(parts[0].count >= 2, "some enqueues were acknowledged before the limit")
        #expect(parts[1].count == 3, "enqueues succeed again once there is room")
        let sink = RecordingDiagnosticsSink()
        let journal = try open(directory, sink: sink)
        #expect(journal.count == parts[0].count + parts[1].count)
        #expect(journal.recovery.unreadableBytes == 0)
        await journal.close()
        #expect(try entryIDs(in: directory) == parts[0] + parts[1], "every acknowledged request, in order")
        let aside = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.contains(".damaged-") }
        #expect(aside.isEmpty)
        try? FileManager.default.removeItem(at: directory)
    }

    static let childDirectoryVariable = "SDKAUTH_JOURNAL_FILE_SIZE_CHILD_DIRECTORY"

    /// Does nothing unless started by ``aFullDiskMakesEnqueueThrowAndEveryAcknowledgedRequestIsRecovered()``.
    @Test func childProcessEnqueuesUntilTheFileSizeLimitRefusesThenMoreAfterItIsRaised() async throws {
        guard let path = ProcessInfo.processInfo.environment[Self.childDirectoryVariable] else { return }
        let directory = URL(fileURLWithPath: path, isDirectory: true)
        let fixture = try QueueFixture { _ in ServerResponse(statusCode: 503) }
        let queue = try SignatureRequestQueue(name: "test", directory: directory, authentication: fixture.authentication, client: fixture.client,
                                              clock: fixture.clock, diagnostics: fixture.sink)
        var original = rlimit()
        try #require(getrlimit(Int32(RLIMIT_FSIZE.rawValue), &original) == 0)
        // Past the limit write(2) returns EFBIG instead of the process being killed by SIGXFSZ.
        signal(SIGXFSZ, SIG_IGN)
        var limited = original
        limited.rlim_cur = 2_000
        try #require(setrlimit(Int32(RLIMIT_FSIZE.rawValue), &limited) == 0)
        var before: [UUID] = []
        var refused = false
        for number in 0..<100 {
            do {
                before.append(try await queue.enqueue(fixture.request(number)))
            } catch {
                refused = true
                break
            }
        }
        try #require(setrlimit(Int32(RLIMIT_FSIZE.rawValue), &original) == 0)
        #expect(refused, "the file-size limit made an enqueue throw")
        var after: [UUID] = []
        for number in 100..<103 { after.append(try await queue.enqueue(fixture.request(number))) }
        await queue.close()
        let report = before.map(\.uuidString).joined(separator: ",") + "|" + after.map(\.uuidString).joined(separator: ",")
        try report.write(to: directory.appendingPathComponent("acknowledged.txt"), atomically: true, encoding: .utf8)
    }
    #endif
}
