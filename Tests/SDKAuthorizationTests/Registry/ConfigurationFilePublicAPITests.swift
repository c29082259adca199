import Foundation
import Testing
import TestSupport
// Not @testable: what a mode author who does not use the Engagement (Exponea) schema sees.
import SDKAuthorization
import SDKAuthorizationModeKit

/// The mode kit's configuration file reader through its public API only: a mode author reads a
/// JSON or property-list file of their own keys, bounded and BOM-tolerant, with the file and the
/// position in every error, and no vendor's key anywhere.
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
}
