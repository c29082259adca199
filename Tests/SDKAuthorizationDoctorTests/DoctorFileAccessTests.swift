import Foundation
import Testing
import TestSupport
@testable import SDKAuthorizationDoctor

/// How the doctor opens what it reads: configuration files, manifests and the target's sources.
@Suite("The doctor reads files bounded, without blocking or following links", .hangLimit)
struct DoctorFileAccessTests {
    private func run(_ package: ScratchPackage, _ files: String...) -> DoctorReport {
        Doctor.run(["--package-directory", package.url.path] + files, now: Date(timeIntervalSince1970: 0), currentDirectory: package.url)
    }

    private func errors(_ report: DoctorReport) -> [String] { report.findings.filter { $0.severity == .error }.map(\.message) }

    /// The first error as printed: a manifest's is `path:line:column: error: message`, as the build prints it.
    private func firstError(_ report: DoctorReport) -> String? { report.findings.first { $0.severity == .error }?.description }

    @Test func aHugeManifestIsRefusedBySizeWithoutBeingRead() throws {
        let package = try ScratchPackage()
        try package.write("Sources/App/authorization.json", Files.good)
        try HostileFiles.makeSparseFile(at: package.url.appendingPathComponent("Sources/App/sdkauth-providers.json").path, size: 400 << 20)
        let before = HostileFiles.readSoFarMiB()
        let report = run(package)
        #expect(firstError(report) == "Sources/App/sdkauth-providers.json:1:1: error: the manifest is larger than 1048576 bytes")
        #expect(HostileFiles.readSoFarMiB() - before < 100)
    }

    @Test func aManifestThatIsASymbolicLinkIsNotFollowed() throws {
        let package = try ScratchPackage()
        try package.write("Sources/App/authorization.json", Files.good)
        let real = try package.write("elsewhere.json", Files.manifest("ExponeaAuthProvider"))
        try FileManager.default.createSymbolicLink(atPath: package.url.appendingPathComponent("Sources/App/sdkauth-providers.json").path,
                                                   withDestinationPath: real.path)
        #expect(firstError(run(package)) == "Sources/App/sdkauth-providers.json:1:1: error: cannot read sdkauth-providers.json: it is a symbolic link, which is not followed")
    }

    @Test func aManifestThatIsAFIFOIsRefusedWithoutWaitingForAWriter() throws {
        let package = try ScratchPackage()
        try package.write("Sources/App/authorization.json", Files.good)
        let report = try HostileFiles.withFIFO(at: package.url.appendingPathComponent("Sources/App/sdkauth-providers.json").path) { run(package) }
        #expect(firstError(report) == "Sources/App/sdkauth-providers.json:1:1: error: cannot read sdkauth-providers.json: it is not a regular file (a FIFO, device or socket)")
    }

    @Test func aConfigurationFileThatIsAFIFOIsRefusedWithoutWaitingForAWriter() throws {
        let package = try ScratchPackage()
        let path = package.url.appendingPathComponent("authorization.json").path
        let report = try HostileFiles.withFIFO(at: path) { run(package, "authorization.json") }
        #expect(errors(report) == ["The configuration file at '\(path)' could not be read: it is not a regular file (a FIFO, device or socket)."])
    }

    @Test func aConfigurationFileThatIsADirectoryIsRefusedAsOne() throws {
        let package = try ScratchPackage()
        let path = package.url.appendingPathComponent("authorization.json").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        #expect(errors(run(package, "authorization.json")) == ["The configuration file at '\(path)' could not be read: it is a directory."])
    }

    @Test func theSourceScanStopsAtItsLimitWithoutReadingAHugeSource() throws {
        let package = try ScratchPackage()
        try package.write("Sources/App/sdkauth-providers.json", Files.manifest("ExponeaAuthProvider").replacingOccurrences(of: "MyApp.", with: "App."))
        try package.write("Sources/App/authorization.json", Files.advanced(#""providerName": "ExponeaAuthProvider""#))
        try HostileFiles.makeSparseFile(at: package.url.appendingPathComponent("Sources/App/Huge.swift").path, size: 400 << 20)
        let before = HostileFiles.readSoFarMiB()
        let report = run(package)
        #expect(report.findings.allSatisfy { $0.severity != .warning }, "\(report.findings)")
        #expect(HostileFiles.readSoFarMiB() - before < 100)
        #expect(ProviderSourceScan.swiftSources(in: package.url.appendingPathComponent("Sources/App")) == nil)
    }

    @Test func theSourceScanPassesOverLinksAndFIFOs() throws {
        let package = try ScratchPackage()
        let folder = package.url.appendingPathComponent("Sources/App")
        try package.write("Sources/App/Real.swift", "final class ExampleAuthProvider: AuthorizationProviderType {}")
        let outside = try package.write("Outside/Other.swift", "final class ExampleAuthProvider: Unrelated {}")
        try FileManager.default.createSymbolicLink(atPath: folder.appendingPathComponent("Link.swift").path, withDestinationPath: outside.path)
        let sources = try HostileFiles.withFIFO(at: folder.appendingPathComponent("Pipe.swift").path) { ProviderSourceScan.swiftSources(in: folder) }
        #expect(sources == [Data("final class ExampleAuthProvider: AuthorizationProviderType {}".utf8)])
    }
}

@Suite("The doctor reads a token from standard input bounded", .hangLimit)
struct DoctorStandardInputTests {
    @Test func anEndlessStandardInputIsReadNoFurtherThanTheLimitAndRefusedAsTooLong() throws {
        let endless = try #require(FileHandle(forReadingAtPath: "/dev/zero"))
        defer { try? endless.close() }
        let token = try #require(Doctor.readToken(from: endless))
        #expect(token.utf8.count == Doctor.maximumStandardInput + 1)
        let report = Doctor.run(["--jwt", "-"], now: Date(timeIntervalSince1970: 0), currentDirectory: URL(fileURLWithPath: "/"), readStandardInput: { token })
        #expect(report.exitStatus == 1)
        #expect(report.findings.first?.message.hasPrefix("JWT: ") == true, "\(report.findings)")
    }

    @Test func aTokenOnStandardInputIsReadWhole() throws {
        let pipe = Pipe()
        pipe.fileHandleForWriting.write(Data("Bearer a.b.c\n".utf8))
        try pipe.fileHandleForWriting.close()
        #expect(Doctor.readToken(from: pipe.fileHandleForReading) == "Bearer a.b.c\n")
    }
}

/// Bytes that count how often they are read: the scan's cost, measured from outside it.
private final class ReadCounter {
    var reads = 0
}

private struct CountingBytes: Collection {
    let bytes: [UInt8]
    let counter: ReadCounter
    var startIndex: Int { bytes.startIndex }
    var endIndex: Int { bytes.endIndex }
    func index(after index: Int) -> Int { index + 1 }
    subscript(index: Int) -> UInt8 {
        counter.reads += 1
        return bytes[index]
    }
}

@Suite("The doctor's source scan reads each byte once", .hangLimit)
struct ProviderSourceScanCostTests {
    /// Sources built to make a scan that looks back or starts again at every match slow: many
    /// declarations and extensions of the name with no `{` after them, long extension paths.
    static let hostile = [
        "class ExampleAuthProvider ", "extension ExampleAuthProvider: ", "extension A.", "extension extension ",
        "struct ExampleAuthProvider: P, ", "enum ExampleAuthProviderX ",
    ]

    @Test(arguments: hostile)
    func everyByteIsReadOnceWhateverTheSourceHolds(unit: String) {
        for size in [4 << 10, 32 << 10] {
            let text = String(repeating: unit, count: size / unit.utf8.count)
            let counter = ReadCounter()
            let source = CountingBytes(bytes: Array(text.utf8), counter: counter)
            let found = ProviderSourceScan.inheritanceClauses(of: "ExampleAuthProvider", in: [source])
            #expect(found.declarations == 0 && found.text.isEmpty)
            #expect(counter.reads == text.utf8.count, "\(counter.reads) reads of \(text.utf8.count) bytes")
        }
    }

    @Test func aDeclarationAfterManyUnclosedOnesIsFoundInOnePass() {
        let text = String(repeating: "extension ExampleAuthProvider: Other ", count: 500) + "final class ExampleAuthProvider: AuthorizationProviderType {}"
        let counter = ReadCounter()
        let found = ProviderSourceScan.inheritanceClauses(of: "ExampleAuthProvider", in: [CountingBytes(bytes: Array(text.utf8), counter: counter)])
        #expect(found.declarations == 1)
        #expect(found.text.contains { ProviderSourceScan.mentions("AuthorizationProviderType", in: $0) })
        #expect(counter.reads == text.utf8.count)
    }

    @Test func manyEntriesAreLookedForInOnePass() {
        let names = Set((0..<200).map { "Provider\($0)" })
        let text = names.sorted().map { "final class \($0): AuthorizationProviderType {}\n" }.joined()
        let counter = ReadCounter()
        let found = ProviderSourceScan.inheritanceClauses(of: names, in: [CountingBytes(bytes: Array(text.utf8), counter: counter)])
        #expect(counter.reads == text.utf8.count)
        #expect(found.count == 200 && found.values.allSatisfy { $0.declarations == 1 && $0.text == [": AuthorizationProviderType "] })
    }

    @Test func declarationsAndExtensionsAreFoundAsBefore() {
        let text = """
            final class ExampleAuthProvider<T>: NSObject, Base {
            }
            extension Outer.ExampleAuthProvider: SDKAuthorization.NamedProviderFactory {}
            extension ExampleAuthProvider.Inner: Unrelated {}
            class ExampleAuthProviderTests: AuthorizationProviderType {}
            // subclass ExampleAuthProvider: Nothing {
            """
        let found = ProviderSourceScan.inheritanceClauses(of: "ExampleAuthProvider", in: [Array(text.utf8)])
        #expect(found.declarations == 1)
        #expect(found.text == ["<T>: NSObject, Base ", ": SDKAuthorization.NamedProviderFactory "])
        #expect(found.text.contains { ProviderSourceScan.mentions("NamedProviderFactory", in: $0) })
        #expect(!found.text.contains { ProviderSourceScan.mentions("AuthorizationProviderType", in: $0) })
    }
}
