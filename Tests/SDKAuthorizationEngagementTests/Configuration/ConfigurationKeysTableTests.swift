import Foundation
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationModeKit
@testable import SDKAuthorizationEngagement
import SDKAuthorizationIDToken
import SDKAuthorizationSignature
import SDKAuthorizationTokenExchange

/// The table of configuration-file keys (the Engagement catalogue's "Bloomreach Engagement (Exponea)" article) is rendered from the lists the file reader checks
/// keys against: the Engagement keys (`AuthorizationConfiguration.fileKeyDescriptors`) and the
/// keys the built-in modes declare (`NamedProviderFactory.settingKeys`), so a key added, renamed or
/// described anew in the code fails here until the article says the same.
@Suite("Documented table of configuration keys", .hangLimit)
struct ConfigurationKeysTableTests {
    static let begin = "<!-- configuration-keys:begin -->\n"
    static let end = "<!-- configuration-keys:end -->"
    /// Where the table is: the Engagement catalogue's article on the mode and its files.
    static let article = "Sources/SDKAuthorizationEngagement/SDKAuthorizationEngagement.docc/EngagementMode.md"

    /// The markdown table the article holds between the two markers.
    static func renderedTable() -> String {
        var lines = ["| key | type | default | what it does | vendor spelling |", "| --- | --- | --- | --- | --- |"]
        for key in AuthorizationConfiguration.fileKeyDescriptors {
            let spellings = key.vendorSpellings.map { "`\($0.key)` (\($0.vendor))" }.joined(separator: ", ")
            lines.append("| `\(key.name)` | \(key.type) | \(key.defaultValue) | \(key.meaning) | \(spellings) |")
        }
        let modes: [(name: String, registration: String, keys: [ModeSettingKey])] = [
            (SignatureMode.providerName, "SignatureMode()", SignatureMode.settingKeys),
            (TokenExchangeMode.providerName, "TokenExchangeMode(signer:)", TokenExchangeMode.settingKeys),
        ]
        for mode in modes {
            for key in mode.keys {
                let type = switch key.type {
                case .bool: "boolean"
                case .string: "string"
                case .url: "string (URL)"
                case .number: "number"
                case .integer: "integer"
                }
                let defaultValue = switch key.defaultValue {
                case .bool(let flag)?: "`\(flag)`"
                case .string(let text)?: "`\(text)`"
                case .url(let url)?: "`\(url.absoluteString)`"
                case .number(let number)?: "`\(number)`"
                case .integer(let number)?: "`\(number)`"
                case nil: key.isRequired ? "required" : "none"
                }
                let spellings = key.vendorSpellings.map { spelling in
                    "`\(spelling.dottedPath)` (\(spelling.vendor)\(spelling.choosesMode ? "; `true` chooses the mode" : ""))"
                }.joined(separator: ", ")
                lines.append("| `\(key.name)` | \(type) | \(defaultValue) | Only with `providerName` `\(mode.name)`, registered as `\(mode.registration)`. \(key.meaning) | \(spellings) |")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    @Test func theEngagementArticleListsEveryConfigurationKeyAsTheReaderKnowsIt() throws {
        var root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: root.appendingPathComponent("README.md").path), root.path != "/" {
            root.deleteLastPathComponent()
        }
        let readme = try String(contentsOf: root.appendingPathComponent(Self.article), encoding: .utf8)
        let section = try #require(readme.components(separatedBy: Self.begin).dropFirst().first?.components(separatedBy: Self.end).first,
                                   "\(Self.article) has no \(Self.begin)...\(Self.end) section; put this table there:\n\(Self.renderedTable())")
        #expect(section == Self.renderedTable(), "\(Self.article)'s table of configuration keys differs from the reader's; the expected table:\n\(Self.renderedTable())")
    }

    @Test func theReaderAcceptsExactlyTheKeysTheTableNames() throws {
        let named = AuthorizationConfiguration.fileKeyDescriptors.flatMap { [$0.name] + $0.vendorSpellings.map(\.key) }
        #expect(Set(named) == AuthorizationConfiguration.fileKeys)
        #expect(Set(named).count == named.count, "a key is listed twice")
        // A key the table does not name is refused as unknown.
        let file = Data(#"{"projectToken": "p", "baseURL": "https://api.example.com", "authorisation": "Token k"}"#.utf8)
        #expect(throws: ConfigurationError.unknownKeys(["authorisation"]).appendingHint("'authorisation': did you mean 'authorization'?")) {
            try AuthorizationConfiguration(data: file, format: .json)
        }
    }
}
