import Foundation
import Testing
import TestSupport
import SDKAuthorization
import SDKAuthorizationModeKit
import SDKAuthorizationEngagement
@testable import SDKAuthorizationDoctor

/// A mode written outside the framework, described to the doctor by its `sdkauth-mode.json`
/// (`--mode-description`): a configuration choosing it is checked as the app, which registers the
/// mode itself, reads it.
@Suite("The doctor knows a mode written outside the framework from its description", .hangLimit)
struct ModeDescriptionTests {
    /// What a third-party package would ship: a mode with keys of every type, one required, one
    /// with a default, one with a vendor spelling that chooses the mode, and a validation.
    struct DPoPMode: NamedProviderFactory {
        static let providerName = "DPoPMode.DPoP"
        static var settingKeys: [ModeSettingKey] {
            [
                ModeSettingKey("dpopTokenURL", type: .url, required: true, meaning: "Where the DPoP-bound access token is requested.",
                               validate: { value in
                                   guard case .url(let url) = value, url.scheme == "https" else { return "an https URL is required" }
                                   return nil
                               }),
                ModeSettingKey("dpopClientID", type: .string, default: .string("app"), meaning: "The client id."),
                ModeSettingKey("dpopNonceRetry", type: .bool, default: .bool(true), meaning: "Whether a nonce error is retried once."),
                ModeSettingKey("dpopEnabled", type: .bool, meaning: "Turns the mode on.",
                               vendorSpellings: [.init(["Vendor", "EnableDPoP"], vendor: "Vendor", choosesMode: true)]),
            ]
        }
        func makeProvider(for context: ProviderFactoryContext) throws -> any AuthorizationProvider { DPoPProvider() }
    }

    struct DPoPProvider: AuthorizationProvider {
        func credential(for context: AuthorizationContext) async throws -> Credential { throw CancellationError() }
    }

    private struct Silent: DiagnosticsSink {
        func record(_ diagnostic: Diagnostic) {}
    }

    private static let description = DPoPMode.modeDescription(product: "DPoPMode")
    private static let tokenURL = #""dpopTokenURL": "https://auth.example.com/token""#

    private func run(_ package: ScratchPackage, _ arguments: String...) -> DoctorReport {
        Doctor.run(["--package-directory", package.url.path] + arguments, now: Date(timeIntervalSince1970: 0), currentDirectory: package.url)
    }

    private func errors(_ report: DoctorReport) -> [Finding] { report.findings.filter { $0.severity == .error } }

    /// A package holding `configuration` as `authorization.json` and the mode's description in a
    /// dependency's folder.
    private func package(_ configuration: String, description: String = Self.description) throws -> ScratchPackage {
        let package = try ScratchPackage()
        try package.write("authorization.json", configuration)
        try package.write(".build/checkouts/dpop-mode/Sources/DPoPMode/sdkauth-mode.json", description)
        return package
    }

    private let descriptionPath = ".build/checkouts/dpop-mode/Sources/DPoPMode/sdkauth-mode.json"

    /// The message the app, which registers the real mode, fails with reading the same file and
    /// starting a client from it.
    private func appError(_ package: ScratchPackage, alsoRegistering other: (any NamedProviderFactory)? = nil) -> String? {
        let registry = ProviderRegistry()
        registry.register(DPoPMode())
        if let other { registry.register(other) }
        do {
            let configuration = try AuthorizationConfiguration(contentsOf: package.url.appendingPathComponent("authorization.json"), registry: registry)
            _ = try AuthorizedHTTPClient(configuration: configuration, registry: registry, diagnostics: Silent())
            return nil
        } catch {
            return error.message
        }
    }

    // MARK: - Configurations choosing the described mode

    @Test func aConfigurationChoosingADescribedModeWithItsKeysIsOk() throws {
        let package = try package(Files.advanced(#""providerName": "DPoPMode.DPoP", \#(Self.tokenURL), "dpopNonceRetry": false"#))
        let report = run(package, "--mode-description", descriptionPath, "authorization.json")
        #expect(report.exitStatus == 0, "\(report.findings)")
        #expect(report.findings.map(\.severity) == [.note, .note])
        #expect(report.findings.first?.message == "ok: project 'p1' at https://api.example.com, Token Authorization (token redacted), advanced auth on, provider name DPoPMode.DPoP")
        #expect(report.findings.last?.message.hasPrefix("DPoPMode.DPoP is the mode of the product DPoPMode, known from its description \(descriptionPath): ") == true)
        #expect(report.findings.last?.message.contains("the app checks the values") == true)
        #expect(appError(package) == nil)
    }

    @Test func withoutItsDescriptionTheModesKeysAreUnknownToTheDoctor() throws {
        let package = try package(Files.advanced(#""providerName": "DPoPMode.DPoP", \#(Self.tokenURL)"#))
        let report = run(package, "authorization.json")
        // The app's message when it does not register the mode, and a note on what the doctor lacks.
        #expect(errors(report).map(\.key) == ["providerName"])
        #expect(errors(report).first?.message.hasPrefix("The mode DPoPMode.DPoP is not registered: the file chooses it (providerName) and gives it the key 'dpopTokenURL'") == true)
        #expect(report.findings.filter { $0.severity == .note }.map(\.message)
            == ["the doctor has no description of DPoPMode.DPoP either: if the app registers the mode, pass its sdkauth-mode.json (NamedProviderFactory.modeDescription(product:)) with --mode-description to have its keys checked"])
    }

    @Test func aMisspeltKeyOfADescribedModeIsRefusedWithTheKeyItMeans() throws {
        let package = try package(Files.advanced(#""providerName": "DPoPMode.DPoP", "dpopTokenUrl": "https://auth.example.com/token""#))
        let report = run(package, "--mode-description", descriptionPath, "authorization.json")
        #expect(report.exitStatus == 1)
        let expected = ConfigurationError.unknownKeys(["dpopTokenUrl"]).appendingHint("in 'authorization.json'; 'dpopTokenUrl': did you mean 'dpopTokenURL'?")
        #expect(errors(report) == [Finding(.error, file: "authorization.json", key: "dpopTokenUrl", expected.message)])
        #expect(appError(package) == expected.message)
    }

    @Test func aMissingRequiredKeyOfADescribedModeIsTheAppsError() throws {
        let package = try package(Files.advanced(#""providerName": "DPoPMode.DPoP", "dpopNonceRetry": true"#))
        let report = run(package, "--mode-description", descriptionPath, "authorization.json")
        #expect(report.exitStatus == 1)
        // The app's message, naming the file, as the doctor's.
        let expected = ConfigurationError.missingKey("dpopTokenURL").appendingHint("in 'authorization.json'").message
        #expect(errors(report) == [Finding(.error, file: "authorization.json", key: "dpopTokenURL", expected)])
        #expect(appError(package) == expected)
    }

    @Test func aValueOfTheWrongTypeForADescribedKeyIsTheAppsError() throws {
        let package = try package(Files.advanced(#""providerName": "DPoPMode.DPoP", \#(Self.tokenURL), "dpopNonceRetry": "yes""#))
        let report = run(package, "--mode-description", descriptionPath, "authorization.json")
        // The app's message, naming the file, as the doctor's.
        let expected = ConfigurationError.wrongType(key: "dpopNonceRetry", expected: "a boolean").appendingHint("in 'authorization.json'")
        #expect(expected.message == "The configuration key 'dpopNonceRetry' must be a boolean. (in 'authorization.json')")
        #expect(errors(report) == [Finding(.error, file: "authorization.json", key: "dpopNonceRetry", expected.message)])
        #expect(appError(package) == expected.message)
    }

    @Test func aDescribedKeyOfAnotherModeIsRefusedAsTheAppRefusesIt() throws {
        // The described key given while the file chooses no provider of the mode.
        let package = try package(Files.advanced(#""providerName": "SDKAuthorization.Signature", \#(Self.tokenURL)"#))
        let report = run(package, "--mode-description", descriptionPath, "authorization.json")
        let app = try #require(appError(package, alsoRegistering: SignatureModeStandIn()))
        #expect(errors(report) == [Finding(.error, file: "authorization.json", key: "dpopTokenURL", app)])
    }

    /// The signature mode as far as this file matters: its name, no key that the file gives.
    struct SignatureModeStandIn: NamedProviderFactory {
        static let providerName = BuiltInProviderName.signature
        func makeProvider(for context: ProviderFactoryContext) throws -> any AuthorizationProvider { DPoPProvider() }
    }

    @Test func aDescribedVendorSpellingChoosesTheModeAsInTheApp() throws {
        let package = try package(#"{"projectToken": "p1", "baseURL": "https://api.example.com", "authorization": "Token k1", \#(Self.tokenURL), "Vendor": {"EnableDPoP": true}}"#)
        let report = run(package, "--mode-description", descriptionPath, "authorization.json")
        #expect(report.exitStatus == 0, "\(report.findings)")
        #expect(report.findings.first?.message.hasSuffix("advanced auth on, provider name DPoPMode.DPoP") == true)
        #expect(appError(package) == nil)
    }

    @Test func aDescribedModeTheManifestRegistersKeepsItsKeys() throws {
        let package = try ScratchPackage()
        try package.write("Sources/App/sdkauth-providers.json", #"{"providers": [{"name": "DPoPMode.DPoP", "type": "DPoPMode.DPoPMode", "mode": "factory"}]}"#)
        try package.write("Sources/App/authorization.json", Files.advanced(#""providerName": "DPoPMode.DPoP", \#(Self.tokenURL)"#))
        try package.write("dpop/sdkauth-mode.json", Self.description)
        let report = run(package, "--mode-description", "dpop/sdkauth-mode.json")
        #expect(report.exitStatus == 0, "\(report.findings)")
        #expect(report.findings.filter { $0.severity != .note } == [])
    }

    // MARK: - The description file

    @Test func theDescriptionRoundTripsToTheModesKeys() throws {
        let read = try ModeDescription.parse(Array(Self.description.utf8)).get()
        #expect(read.providerName == DPoPMode.providerName)
        #expect(read.product == "DPoPMode")
        #expect(read.settingKeys.map(Shape.init) == DPoPMode.settingKeys.map(Shape.init))
        // The validation is not described: the stand-in's keys accept what the mode's refuses.
        let http = ModeSettings.Value.url(URL(string: "http://auth.example.com")!)
        #expect(throws: ConfigurationError.self) { try DPoPMode.settingKeys[0].check(http) }
        #expect(throws: Never.self) { try read.settingKeys[0].check(http) }
    }

    /// Keys the app's registry accepts however odd: the doctor reads back whatever the mode declares.
    struct OddKeysMode: NamedProviderFactory {
        static let providerName = "Odd.Mode"
        static var settingKeys: [ModeSettingKey] {
            [
                ModeSettingKey("odd.key", type: .url, default: .url(URL(string: "/relative/token")!), meaning: "A \"quoted\"\nline\u{1}\\ é 🔑."),
                ModeSettingKey("ödd", type: .string, default: .string(""), required: true, meaning: "",
                               vendorSpellings: [.init(["V.x"], vendor: "V"), .init(["Dict", "ödd"], vendor: "Dict")]),
            ]
        }
        func makeProvider(for context: ProviderFactoryContext) throws -> any AuthorizationProvider { DPoPProvider() }
    }

    @Test func aDescriptionOfOddKeysRoundTripsToo() throws {
        let read = try ModeDescription.parse(Array(OddKeysMode.modeDescription(product: "Odd \"Kit\"").utf8)).get()
        #expect(read.product == "Odd \"Kit\"")
        #expect(read.settingKeys.map(Shape.init) == OddKeysMode.settingKeys.map(Shape.init))
    }

    /// What a description can say of a key.
    struct Shape: Equatable {
        let name: String, type: ModeSettingKey.ValueType, defaultValue: ModeSettings.Value?, isRequired: Bool
        let meaning: String, vendorSpellings: [ModeSettingKey.VendorSpelling]
        init(_ key: ModeSettingKey) {
            (name, type, defaultValue, isRequired) = (key.name, key.type, key.defaultValue, key.isRequired)
            (meaning, vendorSpellings) = (key.meaning, key.vendorSpellings)
        }
    }

    /// An outside mode's number keys: an integer with a default and a range, a number with a range.
    struct NumberKeysMode: NamedProviderFactory {
        static let providerName = "Partner.Numbers"
        static var settingKeys: [ModeSettingKey] {
            [ModeSettingKey("maxTokenAge", type: .integer, default: .integer(600), range: 60...3600, meaning: "Seconds."),
             ModeSettingKey("jitter", type: .number, range: 0...0.5, meaning: "Share.")]
        }
        func makeProvider(for context: ProviderFactoryContext) throws -> any AuthorizationProvider { DPoPProvider() }
    }

    @Test func numberAndIntegerKeysRoundTripWithTheirRanges() throws {
        let read = try ModeDescription.parse(Array(NumberKeysMode.modeDescription(product: "PartnerKit").utf8)).get()
        #expect(read.settingKeys.map(Shape.init) == NumberKeysMode.settingKeys.map(Shape.init))
        #expect(read.settingKeys.map(\.range) == [60...3600, 0...0.5])
    }

    /// Integer defaults a double cannot hold exactly.
    struct LargeDefaultsMode: NamedProviderFactory {
        static let providerName = "Partner.LargeDefaults"
        static var settingKeys: [ModeSettingKey] {
            [ModeSettingKey("most", type: .integer, default: .integer(Int.max), meaning: "At most."),
             ModeSettingKey("least", type: .integer, default: .integer(Int.min), meaning: "At least."),
             ModeSettingKey("odd", type: .integer, default: .integer(9_007_199_254_740_993), meaning: "Past 2^53.")]
        }
        func makeProvider(for context: ProviderFactoryContext) throws -> any AuthorizationProvider { DPoPProvider() }
    }

    @Test func anIntegerDefaultTheAppDeclaresIsReadExactlyFromItsDescription() throws {
        let read = try ModeDescription.parse(Array(LargeDefaultsMode.modeDescription(product: "PartnerKit").utf8)).get()
        #expect(read.settingKeys.map(\.defaultValue) == [.integer(Int.max), .integer(Int.min), .integer(9_007_199_254_740_993)])
    }

    @Test(arguments: [
        (#"{"name": "a", "type": "string", "range": [1, 2], "meaning": "A."}"#, #"key "a": only a number or integer key can have a "range""#),
        (#"{"name": "a", "type": "integer", "range": [1.5, 2], "meaning": "A."}"#, #"key "a": "range" must be an array of two whole numbers, the lowest and the highest value accepted"#),
        (#"{"name": "a", "type": "number", "range": [2, 1], "meaning": "A."}"#, #"key "a": "range" must be an array of two numbers, the lowest and the highest value accepted"#),
        (#"{"name": "a", "type": "integer", "default": 5, "range": [60, 3600], "meaning": "A."}"#, #"key "a": "default" is outside the key's "range""#),
        (#"{"name": "a", "type": "integer", "default": 600.5, "meaning": "A."}"#, #"key "a": "default" of an integer key must be a whole number, found "600.5""#),
        (#"{"name": "a", "type": "number", "default": "600", "meaning": "A."}"#, #"key "a": "default" of a number key must be a number, found a string"#),
    ])
    func aBadRangeOrNumberDefaultInADescriptionIsRefused(key: String, problem: String) throws {
        let text = #"{"providerName": "P.Q", "product": "P", "settingKeys": ["# + key + "]}"
        guard case .failure(let problems) = ModeDescription.parse(Array(text.utf8)) else {
            Issue.record("accepted: \(text)")
            return
        }
        #expect(problems.list.map(\.text) == [problem])
    }

    @Test func theOptionalMembersMayBeLeftOut() throws {
        let read = try ModeDescription.parse(Array(#"""
            {"providerName": "P.Q", "product": "P", "settingKeys": [
              {"name": "a", "type": "string", "meaning": "A.", "vendorSpellings": [{"path": ["A"], "vendor": "V"}]}
            ]}
            """#.utf8)).get()
        let key = try #require(read.settingKeys.first)
        #expect(Shape(key) == Shape(ModeSettingKey("a", type: .string, meaning: "A.", vendorSpellings: [.init(["A"], vendor: "V")])))
    }

    @Test func malformedJSONInADescriptionIsAnErrorAtItsPositionNamingTheFile() throws {
        let package = try package(Files.good, description: "{\n  \"providerName\": \"DPoPMode.DPoP\",\n  \"product\" \"DPoPMode\"\n}")
        let report = run(package, "--mode-description", descriptionPath)
        #expect(report.exitStatus == 1)
        #expect(errors(report).first == Finding(.error, file: "\(descriptionPath):3:13", "malformed JSON: expected ':' after the key \"product\""))
        // Its configuration files are not judged without the mode the app has.
        #expect(errors(report).last == Finding(.error, file: "authorization.json", "not checked: a mode description (--mode-description) is invalid"))
        #expect(errors(report).count == 2)
    }

    @Test func everyProblemOfADescriptionIsReportedAtItsPosition() throws {
        let text = """
            {
              "providerName": "DPoPMode.DPoP",
              "product": "DPoPMode",
              "colour": 1,
              "settingKeys": [
                {"name": "dpopTokenURL", "type": "url", "requried": true, "meaning": "M."},
                {"name": "dpopNonceRetry", "type": "bool", "required": "yes", "meaning": "M."},
                {"name": "dpopClientID", "type": "text", "default": 1, "meaning": "M."},
                {"name": "dpopNonceRetry", "type": "bool", "meaning": "M."},
                {"name": "baseURL", "type": "url", "meaning": "M."},
                {"type": "bool"},
                {"name": "v", "type": "string", "vendorSpellings": [{"path": ["A", "B", "C"], "vendor": "V", "choosesMode": true}], "meaning": "M."},
                {"name": "d", "type": "url", "default": "http://[::1", "meaning": "M."}
              ]
            }
            """
        let package = try package(Files.good, description: text)
        let report = run(package, "--mode-description", descriptionPath)
        let path = descriptionPath
        #expect(errors(report).dropLast().map(\.description) == [
            "\(path):4:3: error: unknown member \"colour\"; the members are \"providerName\", \"product\", \"settingKeys\"",
            "\(path):6:45: error: key \"dpopTokenURL\": unknown member \"requried\"; the members are \"name\", \"type\", \"default\", \"required\", \"range\", \"vendorSpellings\", \"meaning\"",
            "\(path):7:60: error: key \"dpopNonceRetry\": \"required\" must be true or false, found a string",
            "\(path):8:38: error: key \"dpopClientID\": unknown type \"text\"; the types are \"bool\", \"string\", \"url\", \"number\" and \"integer\"",
            "\(path):9:5: error: key \"dpopNonceRetry\": duplicate name; line 7 declares it already",
            "\(path):10:14: error: key \"baseURL\": \"baseURL\" is an Engagement key of every configuration file; a mode cannot own it",
            "\(path):11:5: error: key 6: missing \"name\"",
            "\(path):11:5: error: key 6: missing \"meaning\"",
            "\(path):12:66: error: key \"v\": a vendor spelling's \"path\" must be an array of one or two names (a top-level key, or a dictionary and a key in it)",
            "\(path):12:113: error: key \"v\": only a bool key's vendor spelling can choose the mode",
            "\(path):13:45: error: key \"d\": \"default\" of a url key must be a URL, found \"http://[::1\"",
        ])
    }

    @Test func anUnknownMemberInADescriptionIsRefused() throws {
        let text = Self.description.replacingOccurrences(of: #""required": true"#, with: #""requried": true"#)
        let package = try package(Files.good, description: text)
        let report = run(package, "--mode-description", descriptionPath)
        #expect(errors(report).first?.description
            == "\(descriptionPath):5:45: error: key \"dpopTokenURL\": unknown member \"requried\"; the members are \"name\", \"type\", \"default\", \"required\", \"range\", \"vendorSpellings\", \"meaning\"")
    }

    @Test func aRequiredThatIsNotABooleanIsRefused() throws {
        let text = Self.description.replacingOccurrences(of: #""required": true"#, with: #""required": 1"#)
        let package = try package(Files.good, description: text)
        #expect(errors(run(package, "--mode-description", descriptionPath)).first
            == Finding(.error, file: "\(descriptionPath):5:57", "key \"dpopTokenURL\": \"required\" must be true or false, found a number"))
    }

    @Test func aBuiltInModeCannotBeDescribed() throws {
        let text = Self.description.replacingOccurrences(of: "DPoPMode.DPoP", with: BuiltInProviderName.tokenExchange)
        let package = try package(Files.advanced(#""providerName": "SDKAuthorization.TokenExchange", "tokenExchangeURL": "https://platform.example.com/exchange""#),
                                  description: text)
        let report = run(package, "--mode-description", descriptionPath, "authorization.json")
        #expect(report.exitStatus == 1)
        #expect(errors(report).first == Finding(.error, file: "\(descriptionPath):2:19",
                                                "\"SDKAuthorization.TokenExchange\" is a built-in mode (product SDKAuthorizationTokenExchange); the doctor knows its keys, and a description cannot replace them"))
    }

    @Test func aSecondDescriptionOfTheSameModeIsAnError() throws {
        let package = try package(Files.good)
        try package.write("copy/sdkauth-mode.json", Self.description)
        let report = run(package, "--mode-description", descriptionPath, "--mode-description", "copy/sdkauth-mode.json",
                         "--mode-description", package.url.appendingPathComponent(descriptionPath).path)
        // The same file twice is read once.
        #expect(errors(report).first == Finding(.error, file: "copy/sdkauth-mode.json",
                                                "the mode DPoPMode.DPoP is described already by \(descriptionPath); one description a mode"))
        #expect(errors(report).count == 2)
    }

    @Test func aDescriptionThatIsASymbolicLinkIsNotFollowed() throws {
        let package = try package(Files.good)
        try FileManager.default.createSymbolicLink(atPath: package.url.appendingPathComponent("link.json").path,
                                                   withDestinationPath: package.url.appendingPathComponent(descriptionPath).path)
        #expect(errors(run(package, "--mode-description", "link.json")).first
            == Finding(.error, file: "link.json:1:1", "cannot read sdkauth-mode.json: it is a symbolic link, which is not followed"))
    }

    @Test func aDescriptionThatIsAFIFOIsRefusedWithoutWaitingForAWriter() throws {
        let package = try package(Files.good)
        let report = try HostileFiles.withFIFO(at: package.url.appendingPathComponent("fifo.json").path) {
            run(package, "--mode-description", "fifo.json")
        }
        #expect(errors(report).first == Finding(.error, file: "fifo.json:1:1", "cannot read sdkauth-mode.json: it is not a regular file (a FIFO, device or socket)"))
    }

    @Test func aHugeDescriptionIsRefusedBySizeWithoutBeingRead() throws {
        let package = try package(Files.good)
        try HostileFiles.makeSparseFile(at: package.url.appendingPathComponent("huge.json").path, size: 400 << 20)
        let before = HostileFiles.readSoFarMiB()
        let report = run(package, "--mode-description", "huge.json")
        #expect(errors(report).first == Finding(.error, file: "huge.json:1:1", "the mode description is larger than 1048576 bytes"))
        #expect(HostileFiles.readSoFarMiB() - before < 100)
    }

    @Test func modeDescriptionIsARepeatableOption() throws {
        let request = try Doctor.parse(["--mode-description", "a.json", "--mode-description=b.json", "c.json"], readStandardInput: { nil }).get()
        #expect(request.modeDescriptions == ["a.json", "b.json"])
        #expect(request.files == ["c.json"])
        #expect(Doctor.parse(["--mode-description"], readStandardInput: { nil }) == .failure(Doctor.UsageError("--mode-description needs a value")))
    }
}
