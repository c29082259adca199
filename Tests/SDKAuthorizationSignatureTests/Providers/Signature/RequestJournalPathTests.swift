import Foundation
import SDKAuthorizationTesting
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationSignature
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

@Suite("Signature mode: the queue's journal on a hostile path", .hangLimit)
struct RequestJournalPathTests {
    func entry(_ number: Int) -> QueuedEntry {
        QueuedEntry(id: UUID(), enqueuedAt: Date(timeIntervalSince1970: 1_767_225_600), userId: "user-1",
                    request: OutgoingRequest(method: "POST", url: dataURL, body: Data(#"{"request_id":"r\#(number)"}"#.utf8)))
    }

    func open(_ directory: URL) throws(SignatureQueueError) -> RequestJournalFile {
        try RequestJournalFile(directory: directory, name: "test", limits: .init(maximumEntries: 1_000, maximumBytes: 1 << 20), diagnostics: RecordingDiagnosticsSink())
    }

    @Test func aJournalReplacedByASymbolicLinkIsRefusedAndItsTargetIsUntouched() async throws {
        let directory = try ownerOnlyQueueDirectory()
        let elsewhere = try ownerOnlyQueueDirectory()
        let target = elsewhere.appendingPathComponent("target")
        let original = Data(JournalCodec.header + JournalCodec.encode(.entry(entry(1))))
        try original.write(to: target)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: target.path)
        try FileManager.default.createSymbolicLink(atPath: directory.appendingPathComponent("test.queue").path, withDestinationPath: target.path)
        #expect {
            try open(directory)
        } throws: { error in
            (error as? SignatureQueueError)?.description.contains("symbolic link") == true
        }
        #expect(try Data(contentsOf: target) == original)
        #expect(try FileManager.default.attributesOfItem(atPath: target.path)[.posixPermissions] as? Int == 0o644, "no chmod through the link")

        // A lock file replaced by a link to a missing file: refused, and nothing is created there.
        try FileManager.default.removeItem(at: directory.appendingPathComponent("test.queue"))
        try FileManager.default.removeItem(at: directory.appendingPathComponent("test.lock"))
        let missing = elsewhere.appendingPathComponent("created-through-the-link")
        try FileManager.default.createSymbolicLink(atPath: directory.appendingPathComponent("test.lock").path, withDestinationPath: missing.path)
        #expect(throws: SignatureQueueError.self) { try open(directory) }
        #expect(!FileManager.default.fileExists(atPath: missing.path))
        try? FileManager.default.removeItem(at: directory)
        try? FileManager.default.removeItem(at: elsewhere)
    }

    @Test func aFIFOInPlaceOfTheJournalIsRefusedWithoutBlocking() throws {
        let directory = try ownerOnlyQueueDirectory()
        try #require(mkfifo(directory.appendingPathComponent("test.queue").path, 0o600) == 0)
        #expect {
            try open(directory)
        } throws: { error in
            (error as? SignatureQueueError)?.description.contains("not a regular file") == true
        }
        try? FileManager.default.removeItem(at: directory)
    }

    @Test func aQueueDirectoryOtherUsersCanWriteIsRefused() throws {
        for mode in [0o777, 0o770, 0o1777] {
            let fixture = try QueueFixture()
            try FileManager.default.createDirectory(at: fixture.directory, withIntermediateDirectories: true)
            try #require(chmod(fixture.directory.path, mode_t(mode)) == 0)
            #expect("mode \(String(mode, radix: 8))") {
                try fixture.queue()
            } throws: { error in
                (error as? SignatureQueueError)?.description.contains("can be written by other users") == true
            }
            #expect(!FileManager.default.fileExists(atPath: fixture.fileURL.path), "mode \(String(mode, radix: 8)): nothing is written there")
            try? FileManager.default.removeItem(at: fixture.directory)
        }
    }

    @Test func aQueueDirectoryOwnedByAnotherUserIsRefused() throws {
        guard geteuid() == 0 else { return }  // only root can give a directory away
        let directory = try ownerOnlyQueueDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try #require(chown(directory.path, 65_534, 65_534) == 0)
        #expect {
            try open(directory)
        } throws: { error in
            (error as? SignatureQueueError)?.description.contains("is not owned by this process's user") == true
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty, "nothing is written there")
    }

    @Test func aQueueDirectoryThatIsASymbolicLinkIsRefused() throws {
        let target = try ownerOnlyQueueDirectory()
        let link = temporaryQueueDirectory()
        defer {
            try? FileManager.default.removeItem(at: link)
            try? FileManager.default.removeItem(at: target)
        }
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
        #expect {
            try open(link)
        } throws: { error in
            (error as? SignatureQueueError)?.description.contains("is not a directory (a symbolic link or a file)") == true
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: target.path).isEmpty, "nothing is written through the link")
    }

    @Test func aQueueDirectoryWhoseParentOthersCanWriteIsRefusedUnlessTheParentIsSticky() throws {
        let parent = temporaryQueueDirectory()
        defer { try? FileManager.default.removeItem(at: parent) }
        let directory = parent.appendingPathComponent("queues", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try #require(chmod(parent.path, 0o777) == 0)
        #expect {
            try open(directory)
        } throws: { error in
            let text = (error as? SignatureQueueError)?.description ?? ""
            return text.contains("its parent") && text.contains("can be written by group or others (permissions 777)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty, "nothing is written there")
        // With the sticky bit (as /tmp has) nobody else can rename the directory away.
        try #require(chmod(parent.path, 0o1777) == 0)
        let journal = try open(directory)
        #expect(journal.count == 0)
    }

    @Test func aJournalFileOwnedByAnotherUserIsRefused() throws {
        guard geteuid() == 0 else { return }
        let directory = try ownerOnlyQueueDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("test.queue")
        try Data(JournalCodec.header + JournalCodec.encode(.entry(entry(1)))).write(to: file)
        try #require(chmod(file.path, 0o600) == 0 && chown(file.path, 65_534, 65_534) == 0)
        #expect {
            try open(directory)
        } throws: { error in
            (error as? SignatureQueueError)?.description.contains("the queue file is not owned by this process's user") == true
        }
    }
}
