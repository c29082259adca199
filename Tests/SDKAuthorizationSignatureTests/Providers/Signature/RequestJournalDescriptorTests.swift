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

@Suite("Signature mode: the journal's descriptors and child processes", .hangLimit)
struct RequestJournalDescriptorTests {
    func open(_ directory: URL) throws -> RequestJournalFile {
        try RequestJournalFile(directory: directory, name: "test", limits: .init(maximumEntries: 100, maximumBytes: 1 << 20), diagnostics: RecordingDiagnosticsSink())
    }

    func isCloseOnExec(_ descriptor: Int32) -> Bool {
        let flags = fcntl(descriptor, F_GETFD)
        return flags >= 0 && flags & FD_CLOEXEC != 0
    }

    @Test func theQueueAndLockDescriptorsAreCloseOnExecWhetherTheFileIsNewOrReopened() async throws {
        let directory = try ownerOnlyQueueDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // A new file (written by a rewrite), then the same file reopened as it is.
        for round in ["new", "reopened"] {
            let journal = try open(directory)
            let (file, lock) = journal.descriptors
            #expect(file >= 0 && lock >= 0, "\(round)")
            #expect(isCloseOnExec(file), "\(round): the queue file's descriptor is close-on-exec")
            #expect(isCloseOnExec(lock), "\(round): the lock file's descriptor is close-on-exec")
            await journal.close()
        }
    }

    /// A child process being spawned holds a copy of every descriptor from its fork until its exec
    /// closes them; `dup` makes the same copy of the open file, deterministically.
    @Test func aQueueClosedWhileAChildStillHoldsACopyOfItsLockCanBeReopenedAtOnce() async throws {
        let directory = try ownerOnlyQueueDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let journal = try open(directory)
        let inheritedCopy = dup(journal.descriptors.lock)
        try #require(inheritedCopy >= 0)
        defer { _ = close(inheritedCopy) }
        await journal.close()
        let reopened = try open(directory)
        await reopened.close()
    }

    /// Another thread spawns processes all along (as another test, or the app, may) while a queue is
    /// closed and reopened 500 times: never refused as in use.
    @Test(.timeLimit(.minutes(2))) func aQueueReopenedWhileOtherThreadsSpawnProcessesIsNeverInUse() async throws {
        let directory = try ownerOnlyQueueDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stop = Locked(false)
        let spawner = Thread {
            while !stop.withLock({ $0 }) {
                let child = Process()
                child.executableURL = URL(fileURLWithPath: "/bin/true")
                do {
                    try child.run()
                    child.waitUntilExit()
                } catch {
                    return
                }
            }
        }
        spawner.start()
        defer { stop.withLock { $0 = true } }
        var refused = 0
        for _ in 0..<500 {
            do {
                let journal = try open(directory)
                await journal.close()
            } catch let error as SignatureQueueError where error.code == .queueInUse {
                refused += 1
            }
        }
        #expect(refused == 0, "refused as in use \(refused) times in 500")
    }
}
