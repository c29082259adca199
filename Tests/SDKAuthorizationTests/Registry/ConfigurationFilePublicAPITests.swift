import Foundation
import Testing
import TestSupport
// Not @testable: what a mode author who does not use the Engagement (Exponea) schema sees.
import SDKAuthorization
import SDKAuthorizationModeKit

/// The mode kit's configuration file reader through its public API only: a mode author reads a
/// JSON or property-list file of their own keys, bounded and BOM-tolerant, with the file and the
/// position in every error, and the settings of the mode the file chooses, checked against the
/// registered mode's keys, with the registry's hints for keys nothing owns. No vendor's key anywhere.
@Suite("A configuration file read through the mode kit's public API", .hangLimit)
struct ConfigurationFilePublicAPITests {
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("kit-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    private func write(_ text: String, to name: String, byteOrderMark: Bool = false) throws -> URL {
        let url = directory.appendingPathComponent(name)
        try ((byteOrderMark ? Data([0xEF, 0xBB, 0xBF]) : Data()) + Data(text.utf8)).write(to: url)
        return url
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

    static let json = #"{"mode": "Partner.Mode", "audience": "partner-app", "maxTokenAge": 600, "vendor": {"flag": true}}"#
    static let plist = """
        <?xml version="1.0" encoding="UTF-8"?>
        <plist version="1.0">
        <dict>
            <key>mode</key><string>Partner.Mode</string>
            <key>audience</key><string>partner-app</string>
            <key>maxTokenAge</key><integer>600</integer>
            <key>vendor</key><dict><key>flag</key><true/></dict>
        </dict>
        </plist>
        """
    static let expected: [String: JWTClaimValue] = [
        "mode": .string("Partner.Mode"), "audience": .string("partner-app"), "maxTokenAge": .number(600),
        "vendor": .object(["flag": .bool(true)]),
    ]

    @Test func aJSONFileAndAPropertyListFileOfAnOutsideModeGiveTheSameTopLevelValues() throws {
        let json = try ConfigurationFile(contentsOf: write(Self.json, to: "partner.json"))
        #expect(json.values == Self.expected)
        #expect(json.name == "partner.json")
        let plist = try ConfigurationFile(contentsOf: write(Self.plist, to: "partner.plist"))
        #expect(plist.values == Self.expected)
        // Neither extension: the format comes from the content.
        #expect(try ConfigurationFile(contentsOf: write(Self.plist, to: "partner.conf")).values == Self.expected)
        #expect(try ConfigurationFile(contentsOf: write(Self.json, to: "partner.conf")).values == Self.expected)
    }

    @Test func aByteOrderMarkBeforeJSONOrAPropertyListIsSkipped() throws {
        #expect(try ConfigurationFile(contentsOf: write(Self.json, to: "bom.json", byteOrderMark: true)).values == Self.expected)
        #expect(try ConfigurationFile(contentsOf: write(Self.plist, to: "bom.plist", byteOrderMark: true)).values == Self.expected)
        // Sniffed past the mark too.
        #expect(try ConfigurationFile(contentsOf: write(Self.plist, to: "bom.conf", byteOrderMark: true)).values == Self.expected)
        #expect(try ConfigurationFile(data: Data([0xEF, 0xBB, 0xBF]) + Data(Self.json.utf8), format: .json).values == Self.expected)
    }

    @Test func aMalformedJSONFileIsRefusedNamingTheFileTheLineAndTheColumn() throws {
        let url = try write("{\n  \"audience\": \"partner-app\",\n  \"maxTokenAge\": 6x0\n}", to: "broken.json")
        #expect(message { _ = try ConfigurationFile(contentsOf: url) }
            == "The configuration file is malformed: expected a JSON object of configuration keys. (in 'broken.json', line 3, column 19)")
        // Columns count characters, not bytes; a BOM moves no column.
        let wide = try write("{\"é\": 1,\n  \"ü\": ]}", to: "wide.json", byteOrderMark: true)
        #expect(message { _ = try ConfigurationFile(contentsOf: wide) }
            == "The configuration file is malformed: expected a JSON object of configuration keys. (in 'wide.json', line 2, column 8)")
        // Bytes without a file: the position only.
        #expect(message { _ = try ConfigurationFile(data: Data("\n [1]".utf8), format: .json) }
            == "The configuration file is malformed: expected a JSON object of configuration keys. (at line 2, column 2)")
    }

    @Test func aPropertyListThatIsNotOneFlatDictionaryIsRefusedNamingTheFile() throws {
        let deep = try write(Self.plist.replacingOccurrences(of: "<key>flag</key><true/>", with: "<key>flag</key><dict><key>a</key><true/></dict>"), to: "deep.plist")
        #expect(message { _ = try ConfigurationFile(contentsOf: deep) }
            == "The configuration file is malformed: expected a property list whose root is a dictionary of configuration keys with plain values. (in 'deep.plist')")
        let array = try write(Self.plist.replacingOccurrences(of: "<true/>", with: "<array/>"), to: "array.plist")
        #expect(throws: ConfigurationError.self) { try ConfigurationFile(contentsOf: array) }
    }

    @Test func aRepeatedKeyALargeFileAndAMissingFileAreRefused() throws {
        #expect(message { _ = try ConfigurationFile(data: Data(#"{"audience": "a", "audience": "b"}"#.utf8), format: .json) }
            == "The configuration key 'audience' appears more than once.")
        let repeated = Self.plist.replacingOccurrences(of: "<key>mode</key>", with: "<key>audience</key>")
        #expect(throws: ConfigurationError.duplicateKey("audience")) { try ConfigurationFile(data: Data(repeated.utf8), format: .propertyList) }
        // Exactly the limit is read; one byte more is not.
        let padded = "{" + String(repeating: " ", count: ConfigurationFile.maximumSize - 2) + "}"
        #expect(try ConfigurationFile(contentsOf: write(padded, to: "limit.json")).values.isEmpty)
        #expect(throws: ConfigurationError.fileTooLarge(limit: 65_536)) { try ConfigurationFile(contentsOf: write(padded + " ", to: "over.json")) }
        #expect(throws: ConfigurationError.fileTooLarge(limit: 65_536)) { try ConfigurationFile(data: Data((padded + " ").utf8), format: .json) }
        let missing = directory.appendingPathComponent("missing.json")
        #expect(message { _ = try ConfigurationFile(contentsOf: missing) }
            == "The configuration file at '\(missing.path)' could not be read: no such file.")
    }

    @Test func aSchemaPlacesTheErrorsOfItsOwnKeysInTheFile() throws {
        let url = try write(Self.json, to: "partner.json")
        let file = try ConfigurationFile(contentsOf: url)
        let placed = file.placing(.missingKey("issuer"))
        #expect(placed.message == "The configuration key 'issuer' is required. (in 'partner.json')")
        #expect(placed.code == .missingKey)
        #expect(placed.key == "issuer")
        #expect(placed.path == url.path)
        #expect(file.placing(.missingKey("issuer"), line: 1, column: 2).message
            == "The configuration key 'issuer' is required. (in 'partner.json', line 1, column 2)")
        // Bytes read without a file: nothing to name.
        #expect(try ConfigurationFile(data: Data(Self.json.utf8), format: .json).placing(.missingKey("issuer")) == .missingKey("issuer"))
    }

    // MARK: The settings of the mode a file chooses

    struct PartnerProvider: AuthorizationProvider {
        func credential(for context: AuthorizationContext) async throws -> Credential { .bearer("partner-token") }
    }

    static let partnerKeys = [
        ModeSettingKey("audience", type: .string, required: true, meaning: "Who the token is for."),
        ModeSettingKey("maxTokenAge", type: .number, default: .number(600), range: 60...3600, meaning: "Seconds a token is kept."),
    ]

    /// A registry holding the outside mode `Partner.Mode`, and another mode with a key of its own.
    static func registry() -> ProviderRegistry {
        let registry = ProviderRegistry()
        registry.register(name: "Partner.Mode", settingKeys: partnerKeys) { _ in PartnerProvider() }
        registry.register(name: "Partner.Other", settingKeys: [ModeSettingKey("issuer", type: .string, meaning: "Who signs.")]) { _ in PartnerProvider() }
        return registry
    }

    /// The mode author's own schema: `mode` chooses the mode, `enabled` is theirs.
    private func settings(_ text: String, name: String = "partner.json", byteOrderMark: Bool = false,
                          registry: ProviderRegistry = Self.registry()) throws -> ModeSettings {
        try ConfigurationFile(contentsOf: write(text, to: name, byteOrderMark: byteOrderMark))
            .modeSettings(registry: registry, modeKey: "mode", schemaKeys: ["enabled"])
    }

    private func settingsMessage(_ text: String, name: String = "partner.json", registry: ProviderRegistry = Self.registry(),
                                 otherModes: [ModeDescription] = []) -> String? {
        message {
            _ = try ConfigurationFile(contentsOf: write(text, to: name))
                .modeSettings(registry: registry, modeKey: "mode", schemaKeys: ["enabled"], otherModes: otherModes)
        }
    }

    @Test func anOutsideModesSettingsAreReadFromAJSONOrAPropertyListFileWithTheirDefaults() throws {
        let expected = ModeSettings(["audience": .string("partner-app"), "maxTokenAge": .number(600)])
        #expect(try settings(Self.json.replacingOccurrences(of: #", "vendor": {"flag": true}"#, with: "")) == expected)
        let plist = Self.plist.replacingOccurrences(of: "<key>vendor</key><dict><key>flag</key><true/></dict>", with: "")
        #expect(try settings(plist, name: "partner.plist") == expected)
        #expect(try settings(plist, name: "bom.plist", byteOrderMark: true) == expected)
        // The default fills in; the schema's own key is no mode's and no error.
        #expect(try settings(#"{"mode": "Partner.Mode", "audience": "a", "enabled": true}"#, byteOrderMark: true)
            == ModeSettings(["audience": .string("a"), "maxTokenAge": .number(600)]))
        // No mode chosen: no settings.
        #expect(try settings(#"{"enabled": true}"#) == ModeSettings())
    }

    @Test func aNumberKeyIsReadAtTheEdgesOfItsRangeAndRefusedPastThem() throws {
        #expect(try settings(#"{"mode": "Partner.Mode", "audience": "a", "maxTokenAge": 60}"#)["maxTokenAge"] == .number(60))
        #expect(try settings(#"{"mode": "Partner.Mode", "audience": "a", "maxTokenAge": 3600}"#)["maxTokenAge"] == .number(3600))
        #expect(settingsMessage(#"{"mode": "Partner.Mode", "audience": "a", "maxTokenAge": 3600.5}"#)
            == "The configuration key 'maxTokenAge' is invalid: 3600.5 is outside the range; expected a number from 60 to 3600. (in 'partner.json')")
        #expect(settingsMessage(#"{"mode": "Partner.Mode", "audience": "a", "maxTokenAge": 59}"#)
            == "The configuration key 'maxTokenAge' is invalid: 59 is outside the range; expected a number from 60 to 3600. (in 'partner.json')")
        #expect(settingsMessage(#"{"mode": "Partner.Mode", "audience": "a", "maxTokenAge": "600"}"#)
            == "The configuration key 'maxTokenAge' must be a number from 60 to 3600. (in 'partner.json')")
    }

    @Test func aRequiredKeyMissingIsRefusedNamingTheKeyAndTheFile() {
        #expect(settingsMessage(#"{"mode": "Partner.Mode", "maxTokenAge": 600}"#)
            == "The configuration key 'audience' is required. (in 'partner.json')")
    }

    @Test func anUnknownKeyIsRefusedWithDidYouMean() {
        #expect(settingsMessage(#"{"mode": "Partner.Mode", "audiense": "a"}"#)
            == "Unknown configuration keys: 'audiense'. (in 'partner.json'; 'audiense': did you mean 'audience'?)")
        // Close to a key of the schema itself.
        #expect(settingsMessage(#"{"mode": "Partner.Mode", "audience": "a", "enabeld": true}"#)
            == "Unknown configuration keys: 'enabeld'. (in 'partner.json'; 'enabeld': did you mean 'enabled'?)")
    }

    @Test func aKeyOfAnotherRegisteredModeIsRefusedNamingTheModeKeyToSet() {
        #expect(settingsMessage(#"{"mode": "Partner.Mode", "audience": "a", "issuer": "b"}"#)
            == "The configuration key 'issuer' is invalid: it applies only to the mode Partner.Other; set mode to Partner.Other or remove it. (in 'partner.json')")
    }

    @Test func keysOfAModeTheRegistryDoesNotHoldNameTheModeToRegister() {
        // Chosen under the schema's mode key, not registered, its keys close to none known.
        #expect(settingsMessage(#"{"mode": "Partner.Unregistered", "tenant": "t"}"#)
            == "The mode Partner.Unregistered is not registered: the file chooses it (mode) and gives it the key 'tenant', which only a registered mode declares; register the mode with the registry that reads the file (ProviderRegistry.register(_:)), or correct mode. (in 'partner.json')")
        // A mode the schema knows of without the app registering it: link and register it.
        let described = ModeDescription(providerName: "Partner.Described",
                                        settingKeys: [ModeSettingKey("tenant", type: .string, meaning: "The tenant.")],
                                        product: "PartnerKit", registration: "PartnerMode()")
        #expect(settingsMessage(#"{"mode": "Partner.Described", "tenant": "t"}"#, otherModes: [described])
            == "Unknown configuration keys: 'tenant'. (in 'partner.json'; 'tenant' is a key of the mode Partner.Described, which is not registered: register PartnerMode() (product PartnerKit) with the registry that reads the file)")
    }

    @Test func aModeKeyThatIsNotAStringIsRefused() {
        #expect(settingsMessage(#"{"mode": 1, "audience": "a"}"#) == "The configuration key 'mode' must be a string. (in 'partner.json')")
    }

    @Test func aRegisteredModeOwningAKeyOfTheSchemaIsRefusedBeforeTheFileIsRead() {
        let registry = Self.registry()
        registry.register(name: "Partner.Greedy", settingKeys: [ModeSettingKey("enabled", type: .bool, meaning: "Takes the schema's key.")]) { _ in PartnerProvider() }
        #expect(settingsMessage(#"{"mode": "Partner.Mode", "audience": "a"}"#, registry: registry)
            == #"The provider registry refuses to start: the mode Partner.Greedy cannot be registered: its key "enabled" is a key of the configuration file's own schema; a mode cannot own it."#)
    }
}
