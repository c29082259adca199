import Foundation
import ProviderRegistrationGenerator
import Testing
import TestSupport
@testable import SDKAuthorizationDoctor

/// The doctor and the build-time generator read `sdkauth-providers.json` with one reader: fed the
/// same manifests, they accept and refuse the same ones, with the same `file:line:column` messages.
@Suite("The doctor and the build-time generator accept and refuse the same manifests", .hangLimit)
struct ManifestCorpusTests {
    static func entry(name: String = "ExponeaAuthProvider", type: String = "App.ExampleAuthProvider", mode: String = "customerToken", extra: String = "") -> String {
        #"{"name": \#(name), "type": "\#(type)", "mode": "\#(mode)"\#(extra)}"#
    }

    static func manifest(_ entries: String...) -> String { #"{"providers": ["# + entries.joined(separator: ", ") + "]}" }

    /// (what the case is, the manifest's text, whether the build accepts it).
    static let corpus: [(String, String, Bool)] = [
        ("a good manifest", manifest(entry(name: #""ExponeaAuthProvider""#)), true),
        ("no providers", #"{"providers": []}"#, true),
        ("a byte-order mark", "\u{FEFF}" + manifest(entry(name: #""ExponeaAuthProvider""#)), true),
        ("a generic type", manifest(entry(name: #""ExponeaAuthProvider""#, type: "App.Provider<Swift.Int>")), true),
        ("a 100 KB file", manifest(entry(name: #""ExponeaAuthProvider""#)) + String(repeating: " ", count: 100_000), true),
        ("six parts", manifest(entry(name: #""P""#, type: "App.A.B.C.D.E")), true),
        ("an unknown top-level key", #"{"providers": [], "version": 1}"#, false),
        ("an unknown entry key", manifest(entry(name: #""P""#, extra: #", "note": "x""#)), false),
        ("a name with a space inside (as a generic type's name has)", manifest(entry(name: #""Exponea Provider""#)), true),
        ("a name with a space around it", manifest(entry(name: #"" ExponeaAuthProvider""#)), false),
        ("a name with a quote", manifest(entry(name: #""Exponea\"Provider""#)), false),
        ("a name with a tab", manifest(entry(name: #""Exponea\tProvider""#)), false),
        ("a name of 300 characters", manifest(entry(name: "\"" + String(repeating: "a", count: 300) + "\"")), false),
        ("a seven-part type", manifest(entry(name: #""P""#, type: "App.A.B.C.D.E.F")), false),
        ("malformed JSON", #"{"providers": [}"#, false),
        ("a trailing comma", #"{"providers": [],}"#, false),
        ("providers not an array", #"{"providers": {}}"#, false),
        ("no providers key", #"{}"#, false),
        ("a missing mode", #"{"providers": [{"name": "P", "type": "App.P"}]}"#, false),
        ("an unknown mode", manifest(entry(name: #""P""#, mode: "class")), false),
        ("a type without a module", manifest(entry(name: #""P""#, type: "Provider")), false),
        ("an empty type part", manifest(entry(name: #""P""#, type: "App..P")), false),
        ("an empty name", manifest(entry(name: #""""#)), false),
        ("a duplicate name", manifest(entry(name: #""P""#), entry(name: #""P""#, type: "App.Other")), false),
        ("a duplicate key", #"{"providers": [{"name": "P", "name": "Q", "type": "App.P", "mode": "factory"}]}"#, false),
        ("a name that is a number", manifest(entry(name: "1")), false),
        ("a file over 1 MiB", manifest(entry(name: #""P""#)) + String(repeating: " ", count: 1 << 20), false),
    ]

    /// The generator's error lines for `text`, with the manifest's absolute path replaced by `shown`.
    private func generatorErrors(_ text: String, in package: ScratchPackage, shown: String) throws -> (status: Int32, errors: [String]) {
        let manifest = package.url.appendingPathComponent("Sources/App/sdkauth-providers.json").standardizedFileURL.path
        let output = package.url.appendingPathComponent("Registered.swift").path
        let (status, errors) = RegisterProvidersCommand.run(arguments: ["--manifest", manifest, "--output", output, "--module-name", "App"])
        return (status, errors.map { $0.hasPrefix(manifest + ":") ? shown + $0.dropFirst(manifest.count) : $0 })
    }

    @Test(arguments: corpus.indices)
    func theDoctorAndTheGeneratorGiveTheSameVerdict(index: Int) throws {
        let (name, text, accepted) = Self.corpus[index]
        let package = try ScratchPackage()
        try package.write("Sources/App/sdkauth-providers.json", text)
        try package.write("Sources/App/authorization.json", Files.good)
        let shown = "Sources/App/sdkauth-providers.json"
        let generator = try generatorErrors(text, in: package, shown: shown)
        let report = Doctor.run(["--package-directory", package.url.path], now: Date(timeIntervalSince1970: 0), currentDirectory: package.url)
        let doctorManifestErrors = report.findings.filter { $0.severity == .error && $0.file?.hasPrefix(shown) == true }.map(\.description)
        #expect((generator.status == 0) == accepted, "\(name): the generator says \(generator.errors)")
        #expect(doctorManifestErrors.isEmpty == accepted, "\(name): the doctor says \(doctorManifestErrors)")
        #expect(doctorManifestErrors == generator.errors, "\(name)")
        #expect(report.exitStatus == (accepted ? 0 : 1), "\(name): \(report.findings)")
    }

    @Test func theDoctorNamesAManifestProblemsLineAndColumnAndSkipsTheStartUpCheck() throws {
        let package = try ScratchPackage()
        try package.write("Sources/App/sdkauth-providers.json", """
            {"providers": [
              {"name": "P", "type": "App.P", "mode": "fatcory"}
            ]}
            """)
        try package.write("Sources/App/authorization.json", Files.good)
        let report = Doctor.run(["--package-directory", package.url.path], now: Date(timeIntervalSince1970: 0), currentDirectory: package.url)
        #expect(report.findings.map(\.description) == [
            #"Sources/App/sdkauth-providers.json:2:42: error: entry "P": unknown mode "fatcory"; the modes are "customerToken" (an AuthorizationProviderType class) and "factory" (a NamedProviderFactory type)"#,
            "Sources/App/authorization.json: error: not checked for start-up: its provider manifest Sources/App/sdkauth-providers.json is invalid",
        ])
    }
}
