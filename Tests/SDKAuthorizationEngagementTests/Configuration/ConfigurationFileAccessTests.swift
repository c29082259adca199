import Foundation
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationModeKit
@testable import SDKAuthorizationEngagement

/// How `AuthorizationConfiguration(contentsOf:)` opens a file: only a regular file the path itself
/// names, without waiting on it, judged by its size before it is read.
@Suite("Configuration files are opened without blocking or following links", .hangLimit)
final class ConfigurationFileAccessTests {
    private let directory: URL
    private let good = #"{"projectToken": "p1", "baseURL": "https://api.example.com", "authorization": "Token k1"}"#

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("config-access-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    private func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// The reason of the `unreadableFile` error reading `name` fails with.
    private func unreadableReason(_ name: String) -> String? {
        do {
            _ = try AuthorizationConfiguration(contentsOf: URL(fileURLWithPath: path(name)))
            Issue.record("\(name) was read")
            return nil
        } catch {
            #expect(error.code == .unreadableFile, "\(error)")
            #expect(error.path == path(name))
            return error.reason
        }
    }

    @Test func aFIFOIsRefusedAsNotARegularFileWithoutWaitingForAWriter() throws {
        let reason = try HostileFiles.withFIFO(at: path("auth.json")) { unreadableReason("auth.json") }
        #expect(reason == "it is not a regular file (a FIFO, device or socket)")
    }

    @Test func aDirectoryIsRefusedAsADirectory() throws {
        try FileManager.default.createDirectory(atPath: path("auth.json"), withIntermediateDirectories: false)
        #expect(unreadableReason("auth.json") == "it is a directory")
    }

    @Test func aSymbolicLinkIsNotFollowedEvenToAGoodFile() throws {
        try Data(good.utf8).write(to: URL(fileURLWithPath: path("real.json")))
        try FileManager.default.createSymbolicLink(atPath: path("auth.json"), withDestinationPath: path("real.json"))
        #expect(try AuthorizationConfiguration(contentsOf: URL(fileURLWithPath: path("real.json"))).projectToken == "p1")
        #expect(unreadableReason("auth.json") == "it is a symbolic link, which is not followed")
    }

    @Test func aMissingFileSaysSo() {
        #expect(unreadableReason("missing.json") == "no such file")
    }

    @Test func aHugeFileIsRefusedBySizeWithoutBeingRead() throws {
        try HostileFiles.makeSparseFile(at: path("auth.json"), size: 400 << 20)
        let before = HostileFiles.readSoFarMiB()
        #expect(throws: ConfigurationError.fileTooLarge(limit: AuthorizationConfiguration.maximumFileSize)) {
            try AuthorizationConfiguration(contentsOf: URL(fileURLWithPath: path("auth.json")))
        }
        #expect(HostileFiles.readSoFarMiB() - before < 100)
    }

    @Test func theSharedReaderReadsAFileOfExactlyTheLimitAndRefusesOneByteMore() throws {
        try Data(repeating: 0x41, count: 10).write(to: URL(fileURLWithPath: path("ten")))
        #expect(try ExternalFile.read(atPath: path("ten"), limit: 10) == Data(repeating: 0x41, count: 10))
        #expect(throws: ExternalFile.Problem.tooLarge(limit: 9)) { try ExternalFile.read(atPath: path("ten"), limit: 9) }
    }

    @Test func anEndlessDeviceIsRefusedAsNotARegularFile() {
        #expect(throws: ExternalFile.Problem.notARegularFile) { try ExternalFile.read(atPath: "/dev/zero", limit: 10) }
    }
}
