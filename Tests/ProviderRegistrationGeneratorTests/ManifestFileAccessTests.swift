import Foundation
import SDKAuthorizationModeKit
import SDKAuthorization
import Testing
import TestSupport
@testable import ProviderRegistrationGenerator

/// How the generator opens a target's manifest, and how it echoes what the manifest holds.
@Suite("The generator reads its manifest bounded and echoes it escaped", .hangLimit)
final class ManifestFileAccessTests {
    private let directory: URL
    private var manifestPath: String { directory.appendingPathComponent("sdkauth-providers.json").standardizedFileURL.path }

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("sdkauth-register-access-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    /// Runs the command on whatever is at the manifest's path; a run that fails writes nothing.
    private func run() -> (status: Int32, errors: [String]) {
        let output = directory.appendingPathComponent("Registered.swift").path
        let result = RegisterProvidersCommand.run(arguments: ["--manifest", manifestPath, "--output", output, "--module-name", "MyApp"])
        if result.status != 0 { #expect(!FileManager.default.fileExists(atPath: output)) }
        return result
    }

    @Test func aManifestThatIsASymbolicLinkToAHugeFileIsNotFollowed() throws {
        let target = directory.appendingPathComponent("huge.json").path
        try HostileFiles.makeSparseFile(at: target, size: 300 << 20)
        try FileManager.default.createSymbolicLink(atPath: manifestPath, withDestinationPath: target)
        let before = HostileFiles.readSoFarMiB()
        let result = run()
        #expect(result.status == 1)
        #expect(result.errors == ["\(manifestPath):1:1: error: cannot read sdkauth-providers.json: it is a symbolic link, which is not followed"])
        #expect(HostileFiles.readSoFarMiB() - before < 100)
    }

    @Test func aHugeManifestIsRefusedBySizeWithoutBeingRead() throws {
        try HostileFiles.makeSparseFile(at: manifestPath, size: 300 << 20)
        let before = HostileFiles.readSoFarMiB()
        let result = run()
        #expect(result.errors == ["\(manifestPath):1:1: error: the manifest is larger than 1048576 bytes"])
        #expect(HostileFiles.readSoFarMiB() - before < 100)
    }

    @Test func aManifestThatIsAFIFOIsRefusedWithoutWaitingForAWriter() throws {
        let result = try HostileFiles.withFIFO(at: manifestPath) { run() }
        #expect(result.status == 1)
        #expect(result.errors == ["\(manifestPath):1:1: error: cannot read sdkauth-providers.json: it is not a regular file (a FIFO, device or socket)"])
    }

    @Test func aManifestThatIsADirectoryIsRefusedAsOne() throws {
        try FileManager.default.createDirectory(atPath: manifestPath, withIntermediateDirectories: false)
        #expect(run().errors == ["\(manifestPath):1:1: error: cannot read sdkauth-providers.json: it is a directory"])
    }

    @Test func textThatCouldForgeOrHideADiagnosticIsEscapedAsTheDoctorEscapesIt() throws {
        // U+202E (right-to-left override), U+2028 (line separator), U+0085 (next line), U+009B (a C1 control).
        let mode = "a\u{202E}b\u{2028}c\u{85}d\u{9B}e\"f"
        let json = #"{"providers": [{"name": "A", "type": "M.A", "mode": "a\u202Eb\u2028c\u0085d\u009Be\"f"}]}"#
        try Data(json.utf8).write(to: URL(fileURLWithPath: manifestPath))
        let result = run()
        let line = try #require(result.errors.first)
        #expect(line.contains(#"unknown mode "a\u{202e}b\u{2028}c\u{85}d\u{9b}e\"f""#), "\(line)")
        #expect(line.contains(LogText.doubleQuoted(mode, limit: 80)))
        #expect(!line.unicodeScalars.contains { [0x202E, 0x2028, 0x85, 0x9B].contains($0.value) })
    }

    @Test func thePathOfTheManifestIsEscapedToo() throws {
        let folder = directory.appendingPathComponent("x\u{2028}error: forged")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let manifest = folder.appendingPathComponent("sdkauth-providers.json").path
        let result = RegisterProvidersCommand.run(arguments: ["--manifest", manifest, "--output", folder.appendingPathComponent("R.swift").path, "--module-name", "MyApp"])
        #expect(result.errors.count == 1)
        #expect(result.errors.first?.contains("x\\u{2028}error: forged/sdkauth-providers.json:1:1: error: cannot read") == true, "\(result.errors)")
    }
}
