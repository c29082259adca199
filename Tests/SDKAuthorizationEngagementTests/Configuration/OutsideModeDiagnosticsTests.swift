import Foundation
import SDKAuthorizationTesting
import Testing
import TestSupport
import SDKAuthorization
import SDKAuthorizationModeKit
@testable import SDKAuthorizationEngagement

/// What an outside mode's author (a mode in a package of its own, public API only) gets from the
/// configuration reader and the client at start: number settings with a default and a range, a
/// mode the app forgot to register named as such, a mode key that would be ignored refused, and a
/// byte-order mark read as every reader of the framework reads it.
@Suite("Diagnostics an outside mode's author can act on", .hangLimit)
struct OutsideModeDiagnosticsTests {
    struct AudienceProvider: AuthorizationProvider {
        func credential(for context: AuthorizationContext) async throws -> Credential { .bearer("audience-token") }
    }

    /// One required string key, one optional integer key with a default and a range, one number key with a range.
    struct AudienceMode: NamedProviderFactory {
        static let providerName = "Partner.Audience"
        static var settingKeys: [ModeSettingKey] {
            [ModeSettingKey("audience", type: .string, required: true, meaning: "Who the token is for."),
             ModeSettingKey("maxTokenAge", type: .integer, default: .integer(600), range: 60...3600, meaning: "Seconds a token is used at most."),
             ModeSettingKey("jitter", type: .number, range: 0...0.5, meaning: "The share of the age a refresh may come early.")]
        }
        func makeProvider(for context: ProviderFactoryContext) throws -> any AuthorizationProvider { AudienceProvider() }
    }

    private static let plain = #""projectToken": "p1", "baseURL": "https://api.example.com", "authorization": "Token k1""#

    private static func registry() -> ProviderRegistry {
        let registry = ProviderRegistry()
        registry.register(AudienceMode())
        return registry
    }

    /// The file `{plain, members}` written as `authorization.json` (or `name`) in a folder of its own.
    private func write(_ members: String, name: String = "authorization.json", prefix: [UInt8] = []) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("outside-mode-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let url = folder.appendingPathComponent(name)
        try Data(prefix + Array(("{" + Self.plain + (members.isEmpty ? "" : ", " + members) + "}").utf8)).write(to: url)
        return url
    }

    private func read(_ members: String, registry: ProviderRegistry = registry()) throws -> AuthorizationConfiguration {
        let url = try write(members)
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        return try AuthorizationConfiguration(contentsOf: url, registry: registry)
    }

    private func message(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch let error as ConfigurationError {
            return error.message
        } catch {
            return "\(error)"
        }
    }

    private func start(_ configuration: AuthorizationConfiguration, registry: ProviderRegistry = registry()) throws {
        _ = try AuthorizedHTTPClient(configuration: configuration, registry: registry, transport: RecordingTransport(),
                                     diagnostics: RecordingDiagnosticsSink())
    }

    // MARK: A number can be a setting

    @Test func anIntegerAndANumberKeyAreReadFromAFile() throws {
        let configuration = try read(#""advancedAuthEnabled": true, "providerName": "Partner.Audience", "audience": "api", "maxTokenAge": 600, "jitter": 0.25"#)
        #expect(configuration.modeSettings.integer("maxTokenAge") == 600)
        #expect(configuration.modeSettings.number("jitter") == 0.25)
        #expect(configuration.modeSettings.string("audience") == "api")
        try start(configuration)
    }

    @Test func anIntegerKeyTheFileLeavesOutGetsItsDefault() throws {
        let configuration = try read(#""advancedAuthEnabled": true, "providerName": "Partner.Audience", "audience": "api""#)
        #expect(configuration.modeSettings.integer("maxTokenAge") == 600)
        #expect(configuration.modeSettings.number("jitter") == nil)
    }

    @Test func theRangesBoundsAreAccepted() throws {
        let low = try read(#""advancedAuthEnabled": true, "providerName": "Partner.Audience", "audience": "api", "maxTokenAge": 60, "jitter": 0"#)
        #expect(low.modeSettings.integer("maxTokenAge") == 60)
        let high = try read(#""advancedAuthEnabled": true, "providerName": "Partner.Audience", "audience": "api", "maxTokenAge": 3600, "jitter": 0.5"#)
        #expect(high.modeSettings.integer("maxTokenAge") == 3600)
        #expect(high.modeSettings.number("jitter") == 0.5)
    }

    @Test func aStringForAnIntegerKeyIsRefusedNamingTheTypeTheRangeAndTheFile() throws {
        #expect(message { _ = try read(#""advancedAuthEnabled": true, "providerName": "Partner.Audience", "audience": "api", "maxTokenAge": "600""#) }
            == "The configuration key 'maxTokenAge' must be an integer from 60 to 3600. (in 'authorization.json')")
    }

    @Test func aFractionForAnIntegerKeyIsRefused() throws {
        #expect(message { _ = try read(#""advancedAuthEnabled": true, "providerName": "Partner.Audience", "audience": "api", "maxTokenAge": 600.5"#) }
            == "The configuration key 'maxTokenAge' is invalid: 600.5 is not a whole number; expected an integer from 60 to 3600. (in 'authorization.json')")
    }

    @Test func anIntegerJustOutsideTheRangeIsRefused() throws {
        #expect(message { _ = try read(#""advancedAuthEnabled": true, "providerName": "Partner.Audience", "audience": "api", "maxTokenAge": 59"#) }
            == "The configuration key 'maxTokenAge' is invalid: 59 is outside the range; expected an integer from 60 to 3600. (in 'authorization.json')")
        #expect(message { _ = try read(#""advancedAuthEnabled": true, "providerName": "Partner.Audience", "audience": "api", "maxTokenAge": 3601"#) }
            == "The configuration key 'maxTokenAge' is invalid: 3601 is outside the range; expected an integer from 60 to 3600. (in 'authorization.json')")
    }

    @Test func aNumberJustOutsideTheRangeIsRefused() throws {
        #expect(message { _ = try read(#""advancedAuthEnabled": true, "providerName": "Partner.Audience", "audience": "api", "jitter": 0.51"#) }
            == "The configuration key 'jitter' is invalid: 0.51 is outside the range; expected a number from 0 to 0.5. (in 'authorization.json')")
        #expect(message { _ = try read(#""advancedAuthEnabled": true, "providerName": "Partner.Audience", "audience": "api", "jitter": true"#) }
            == "The configuration key 'jitter' must be a number from 0 to 0.5. (in 'authorization.json')")
    }

    @Test func aPropertyListsIntegerIsAnIntegerSetting() throws {
        let plist = """
        <?xml version="1.0" encoding="UTF-8"?>
        <plist version="1.0"><dict>
        <key>projectToken</key><string>p1</string><key>baseURL</key><string>https://api.example.com</string>
        <key>authorization</key><string>Token k1</string><key>advancedAuthEnabled</key><true/>
        <key>providerName</key><string>Partner.Audience</string><key>audience</key><string>api</string>
        <key>maxTokenAge</key><integer>900</integer><key>jitter</key><real>0.125</real>
        </dict></plist>
        """
        let configuration = try AuthorizationConfiguration(data: Data(plist.utf8), format: .propertyList, registry: Self.registry())
        #expect(configuration.modeSettings.integer("maxTokenAge") == 900)
        #expect(configuration.modeSettings.number("jitter") == 0.125)
    }

    @Test func anIntegerOutsideTheRangeInCodeIsRefusedWhenTheClientStarts() throws {
        let configuration = try AuthorizationConfiguration(projectToken: "p1", baseURL: "https://api.example.com", authorization: "Token k1",
                                                           advancedAuthEnabled: true, providerLookup: .implicitName(AudienceMode.providerName),
                                                           modeSettings: ModeSettings(["audience": .string("api"), "maxTokenAge": .integer(10)]))
        #expect(message { try start(configuration) } == "The configuration key 'maxTokenAge' is invalid: 10 is outside the range; expected an integer from 60 to 3600.")
        let wrongType = try AuthorizationConfiguration(projectToken: "p1", baseURL: "https://api.example.com", authorization: "Token k1",
                                                       advancedAuthEnabled: true, providerLookup: .implicitName(AudienceMode.providerName),
                                                       modeSettings: ModeSettings(["audience": .string("api"), "maxTokenAge": .number(600)]))
        #expect(message { try start(wrongType) } == "The configuration key 'maxTokenAge' must be an integer from 60 to 3600.")
    }

    struct BadRangeMode: NamedProviderFactory {
        static let providerName = "Partner.BadRange"
        static var settingKeys: [ModeSettingKey] { [ModeSettingKey("audience", type: .string, range: 1...2, meaning: "Who.")] }
        func makeProvider(for context: ProviderFactoryContext) throws -> any AuthorizationProvider { AudienceProvider() }
    }

    struct BadDefaultMode: NamedProviderFactory {
        static let providerName = "Partner.BadDefault"
        static var settingKeys: [ModeSettingKey] {
            [ModeSettingKey("maxTokenAge", type: .integer, default: .integer(30), range: 60...3600, meaning: "Seconds.")]
        }
        func makeProvider(for context: ProviderFactoryContext) throws -> any AuthorizationProvider { AudienceProvider() }
    }

    @Test func aModeDeclaringARangeOnAStringKeyOrADefaultOutsideItsRangeIsRefusedAtRegistration() throws {
        let badRange = ProviderRegistry()
        badRange.register(BadRangeMode())
        #expect(message { _ = try read("", registry: badRange) }
            == #"The provider registry refuses to start: the mode Partner.BadRange cannot be registered: its key "audience" declares a range, which only a number or integer key can have."#)
        let badDefault = ProviderRegistry()
        badDefault.register(BadDefaultMode())
        #expect(message { _ = try read("", registry: badDefault) }
            == #"The provider registry refuses to start: the mode Partner.BadDefault cannot be registered: its key "maxTokenAge" has a default outside its range; expected an integer from 60 to 3600."#)
    }

    struct InfiniteDefaultMode: NamedProviderFactory {
        static let providerName = "Partner.InfiniteDefault"
        static var settingKeys: [ModeSettingKey] { [ModeSettingKey("jitter", type: .number, default: .number(.infinity), meaning: "Share.")] }
        func makeProvider(for context: ProviderFactoryContext) throws -> any AuthorizationProvider { AudienceProvider() }
    }

    struct NaNDefaultMode: NamedProviderFactory {
        static let providerName = "Partner.NaNDefault"
        static var settingKeys: [ModeSettingKey] { [ModeSettingKey("jitter", type: .number, default: .number(.nan), meaning: "Share.")] }
        func makeProvider(for context: ProviderFactoryContext) throws -> any AuthorizationProvider { AudienceProvider() }
    }

    @Test func aModeDeclaringANumberDefaultThatIsNotFiniteIsRefusedAtRegistration() throws {
        // A value that is not finite is refused from a file and in code; a default must not slip it
        // in (nor write `"default": nan` into the mode's description, which is then not JSON).
        let infinite = ProviderRegistry()
        infinite.register(InfiniteDefaultMode())
        #expect(message { _ = try read("", registry: infinite) }
            == #"The provider registry refuses to start: the mode Partner.InfiniteDefault cannot be registered: its key "jitter" has a default that is not a finite number."#)
        let nan = ProviderRegistry()
        nan.register(NaNDefaultMode())
        #expect(message { _ = try read("", registry: nan) }
            == #"The provider registry refuses to start: the mode Partner.NaNDefault cannot be registered: its key "jitter" has a default that is not a finite number."#)
    }

    // MARK: An outside mode the app forgot to register

    @Test func anUnregisteredModeChosenInCodeWithSettingsIsNamedWithWhatToRegister() throws {
        let configuration = try AuthorizationConfiguration(projectToken: "p1", baseURL: "https://api.example.com", authorization: "Token k1",
                                                           advancedAuthEnabled: true, providerLookup: .implicitName(AudienceMode.providerName),
                                                           modeSettings: ModeSettings(["audience": .string("api")]))
        #expect(message { try start(configuration, registry: ProviderRegistry()) }
            == #"Advanced authorization flag has been enabled without provider ("Partner.Audience" is not registered, and the configuration gives it the mode setting 'audience': register the mode with the registry (ProviderRegistry.register(_:)) before the client starts)"#)
        let android = try AuthorizationConfiguration(projectToken: "p1", baseURL: "https://api.example.com", authorization: "Token k1",
                                                     advancedAuthEnabled: true, providerLookup: .registeredClassName(AudienceMode.providerName),
                                                     modeSettings: ModeSettings(["audience": .string("api"), "maxTokenAge": .integer(600)]))
        #expect(message { try start(android, registry: ProviderRegistry()) }
            == #"Registered Partner.Audience class has not been found ("Partner.Audience" is not registered, and the configuration gives it the mode settings 'audience', 'maxTokenAge': register the mode with the registry (ProviderRegistry.register(_:)) before the client starts)"#)
    }

    @Test func theDocumentedLookupMessagesStayByteForByteWithoutModeSettings() throws {
        let implicit = try AuthorizationConfiguration(projectToken: "p1", baseURL: "https://api.example.com", authorization: "Token k1",
                                                      advancedAuthEnabled: true)
        #expect(message { try start(implicit, registry: ProviderRegistry()) } == "Advanced authorization flag has been enabled without provider")
        let named = try AuthorizationConfiguration(projectToken: "p1", baseURL: "https://api.example.com", authorization: "Token k1",
                                                   advancedAuthEnabled: true, providerLookup: .registeredClassName("MyApp.ExampleAuthProvider"))
        #expect(message { try start(named, registry: ProviderRegistry()) } == "Registered MyApp.ExampleAuthProvider class has not been found")
    }

    @Test func anUnregisteredModesKeysInAFileSayTheModeIsNotRegistered() throws {
        let file = #""advancedAuthEnabled": true, "providerName": "Partner.Audience", "audience": "api", "maxTokenAge": 600"#
        #expect(message { _ = try read(file, registry: ProviderRegistry()) }
            == "The mode Partner.Audience is not registered: the file chooses it (providerName) and gives it the keys 'audience', 'maxTokenAge', which only a registered mode declares; register the mode with the registry that reads the file (ProviderRegistry.register(_:)), or correct providerName. (in 'authorization.json')")
        let error = try #require(throws: ConfigurationError.self) { _ = try read(file, registry: ProviderRegistry()) }
        #expect(error.code == .modeNotRegistered)
        #expect(error.name == "Partner.Audience")
        #expect(error.keys == ["audience", "maxTokenAge"])
    }

    @Test func aMisspeltKeyBesideAnUnregisteredNameIsStillADidYouMean() throws {
        // A key close to a known one is a typo, not an unregistered mode's key.
        #expect(message { _ = try read(#""advancedAuthEnabld": true, "providerName": "Partner.Audience""#, registry: ProviderRegistry()) }
            == "Unknown configuration keys: 'advancedAuthEnabld'. (in 'authorization.json'; 'advancedAuthEnabld': did you mean 'advancedAuthEnabled'?)")
    }

    @Test func anUnknownKeyBesideANameThatResolvesIsStillAnUnknownKey() throws {
        // A registered provider that is not a mode owns no key: the key is unknown, not a mode's.
        let registry = ProviderRegistry()
        registry.register(name: "Partner.Audience") { _ in AudienceProvider() }
        #expect(message { _ = try read(#""advancedAuthEnabled": true, "providerName": "Partner.Audience", "audience": "api""#, registry: registry) }
            == "Unknown configuration keys: 'audience'. (in 'authorization.json')")
    }

    // MARK: A key that would be ignored is refused

    @Test func aModesKeyWithoutAdvancedAuthIsRefusedNotIgnored() throws {
        let expected = "The configuration key 'audience' is invalid: it would be ignored: it is a setting of the mode Partner.Audience, which is used only with advancedAuthEnabled true; set advancedAuthEnabled to true, or remove the key. (in 'authorization.json')"
        #expect(message { _ = try read(#""providerName": "Partner.Audience", "audience": "api""#) } == expected)
        #expect(message { _ = try read(#""advancedAuthEnabled": false, "providerName": "Partner.Audience", "audience": "api""#) } == expected)
        #expect(message { _ = try read(#""advancedAuthEnabled": false, "providerName": "Partner.Audience", "maxTokenAge": 600"#) }
            == "The configuration key 'maxTokenAge' is invalid: it would be ignored: it is a setting of the mode Partner.Audience, which is used only with advancedAuthEnabled true; set advancedAuthEnabled to true, or remove the key. (in 'authorization.json')")
    }

    @Test func aModeNamedWithoutAdvancedAuthAndWithoutItsKeysIsAcceptedAndCarriesNoSettings() throws {
        // Advanced auth turned off with the mode still named: nothing set is ignored, and the
        // default of maxTokenAge is not carried for a mode that is off.
        let configuration = try read(#""advancedAuthEnabled": false, "providerName": "Partner.Audience""#)
        #expect(configuration.modeSettings == ModeSettings())
        try start(configuration)
    }

    @Test func modeSettingsInCodeWithoutAdvancedAuthAreRefusedWhenTheClientStarts() throws {
        let configuration = try AuthorizationConfiguration(projectToken: "p1", baseURL: "https://api.example.com", authorization: "Token k1",
                                                           providerLookup: .implicitName(AudienceMode.providerName),
                                                           modeSettings: ModeSettings(["audience": .string("api")]))
        #expect(message { try start(configuration) }
            == "The configuration key 'audience' is invalid: it would be ignored: it is a setting of the mode Partner.Audience, which is used only with advancedAuthEnabled true; set advancedAuthEnabled to true, or remove the key.")
        let unnamed = try AuthorizationConfiguration(projectToken: "p1", baseURL: "https://api.example.com", authorization: "Token k1",
                                                     providerLookup: .registeredClassName(nil),
                                                     modeSettings: ModeSettings(["maxTokenAge": .integer(600)]))
        #expect(message { try start(unnamed) }
            == "The configuration key 'maxTokenAge' is invalid: it would be ignored: it is a setting of a mode, which is used only with advancedAuthEnabled true; set advancedAuthEnabled to true, or remove the key.")
    }

    @Test func aModeSettingKeyInCodeWithoutAdvancedAuthIsShownEscapedAndBounded() throws {
        // ModeSettings made in code may carry any text as a key (read from a remote configuration, say).
        let hostile = "evil\n\u{1B}[31m" + String(repeating: "k", count: 5_000)
        let configuration = try AuthorizationConfiguration(projectToken: "p1", baseURL: "https://api.example.com", authorization: "Token k1",
                                                           providerLookup: .registeredClassName(nil),
                                                           modeSettings: ModeSettings([hostile: .string("x")]))
        let shown = try #require(message { try start(configuration) })
        #expect(!shown.contains("\n"))
        #expect(!shown.contains("\u{1B}"))
        #expect(shown.count < 400)
        #expect(shown.hasPrefix(#"The configuration key 'evil\u{a}\u{1b}[31mkkk"#))
    }

    /// An integer key without a range: only the type limits its values.
    struct CountMode: NamedProviderFactory {
        static let providerName = "Partner.Count"
        static var settingKeys: [ModeSettingKey] { [ModeSettingKey("retryCount", type: .integer, meaning: "How many times.")] }
        func makeProvider(for context: ProviderFactoryContext) throws -> any AuthorizationProvider { AudienceProvider() }
    }

    private static func countRegistry() -> ProviderRegistry {
        let registry = ProviderRegistry()
        registry.register(CountMode())
        return registry
    }

    @Test func anIntegerTooLargeToBeReadExactlyIsRefusedNotRounded() throws {
        // 2^53 + 1 has no double of its own: read as a double it would become 2^53, silently.
        let exact = try read(#""advancedAuthEnabled": true, "providerName": "Partner.Count", "retryCount": 9007199254740991"#, registry: Self.countRegistry())
        #expect(exact.modeSettings.integer("retryCount") == 9_007_199_254_740_991)
        let tooLarge = "The configuration key 'retryCount' is invalid: it is beyond ±9007199254740991, the largest whole number a configuration file holds exactly; expected an integer. (in 'authorization.json')"
        for number in ["9007199254740993", "-9007199254740993", "10000000000000000000"] {
            #expect(message { _ = try read(#""advancedAuthEnabled": true, "providerName": "Partner.Count", "retryCount": \#(number)"#, registry: Self.countRegistry()) }
                == tooLarge, "\(number)")
        }
        let plist = """
        <?xml version="1.0" encoding="UTF-8"?>
        <plist version="1.0"><dict>
        <key>projectToken</key><string>p1</string><key>baseURL</key><string>https://api.example.com</string>
        <key>authorization</key><string>Token k1</string><key>advancedAuthEnabled</key><true/>
        <key>providerName</key><string>Partner.Count</string><key>retryCount</key><integer>9223372036854775807</integer>
        </dict></plist>
        """
        #expect(message { _ = try AuthorizationConfiguration(data: Data(plist.utf8), format: .propertyList, registry: Self.countRegistry()) }
            == "The configuration key 'retryCount' is invalid: it is beyond ±9007199254740991, the largest whole number a configuration file holds exactly; expected an integer.")
    }

    // MARK: A byte-order mark

    private static let bom: [UInt8] = [0xEF, 0xBB, 0xBF]

    @Test func aJSONFileStartingWithAByteOrderMarkIsRead() throws {
        for name in ["authorization.json", "authorization.config"] {
            let url = try write(#""advancedAuthEnabled": true, "providerName": "Partner.Audience", "audience": "api""#, name: name, prefix: Self.bom)
            defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
            let configuration = try AuthorizationConfiguration(contentsOf: url, registry: Self.registry())
            #expect(configuration.projectToken == "p1")
            #expect(configuration.modeSettings.string("audience") == "api")
        }
        let data = Data(Self.bom + Array(("{" + Self.plain + "}").utf8))
        #expect(try AuthorizationConfiguration(data: data, format: .json).projectToken == "p1")
    }

    @Test func aByteOrderMarkKeepsAMalformedFilesLineAndColumn() throws {
        // The mark is not a character an editor shows: the column counts from the brace.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("outside-mode-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("authorization.json")
        try Data(Self.bom + Array(#"{"projectToken": "p1",}"#.utf8)).write(to: url)
        #expect(message { _ = try AuthorizationConfiguration(contentsOf: url) }
            == "The configuration file is malformed: expected a JSON object of configuration keys. (in 'authorization.json', line 1, column 23)")
    }

    @Test func aPropertyListStartingWithAByteOrderMarkIsRead() throws {
        let plist = """
        <?xml version="1.0" encoding="UTF-8"?>
        <plist version="1.0"><dict>
        <key>projectToken</key><string>p1</string><key>baseURL</key><string>https://api.example.com</string>
        </dict></plist>
        """
        let data = Data(Self.bom + Array(plist.utf8))
        #expect(try AuthorizationConfiguration(data: data, format: .propertyList).projectToken == "p1")
        for name in ["authorization.plist", "authorization.config"] {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("outside-mode-\(UUID().uuidString)", isDirectory: true)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let url = folder.appendingPathComponent(name)
            try data.write(to: url)
            #expect(try AuthorizationConfiguration(contentsOf: url).projectToken == "p1")
        }
    }
}
