import Foundation
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationEngagement

/// The README's table of configuration-file keys is rendered from the list the file reader checks
/// keys against (`AuthorizationConfiguration.fileKeyDescriptors`), so a key added, renamed or
/// described anew in the code fails here until the README says the same.
@Suite("README table of configuration keys", .hangLimit)
struct ConfigurationKeysTableTests {
    static let begin = "<!-- configuration-keys:begin -->\n"
    static let end = "<!-- configuration-keys:end -->"

    /// The markdown table the README holds between the two markers.
    static func renderedTable() -> String {
        var lines = ["| key | type | default | what it does | vendor spelling |", "| --- | --- | --- | --- | --- |"]
        for key in AuthorizationConfiguration.fileKeyDescriptors {
            let spellings = key.vendorSpellings.map { "`\($0.key)` (\($0.vendor))" }.joined(separator: ", ")
            lines.append("| `\(key.name)` | \(key.type) | \(key.defaultValue) | \(key.meaning) | \(spellings) |")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    @Test func theREADMEListsEveryConfigurationKeyAsTheReaderKnowsIt() throws {
        var root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: root.appendingPathComponent("README.md").path), root.path != "/" {
            root.deleteLastPathComponent()
        }
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let section = try #require(readme.components(separatedBy: Self.begin).dropFirst().first?.components(separatedBy: Self.end).first,
                                   "README.md has no \(Self.begin)...\(Self.end) section; put this table there:\n\(Self.renderedTable())")
        #expect(section == Self.renderedTable(), "README.md's table of configuration keys differs from the reader's; the expected table:\n\(Self.renderedTable())")
    }

    @Test func theReaderAcceptsExactlyTheKeysTheTableNames() throws {
        let named = AuthorizationConfiguration.fileKeyDescriptors.flatMap { [$0.name] + $0.vendorSpellings.map(\.key) }
        #expect(Set(named) == AuthorizationConfiguration.fileKeys)
        #expect(Set(named).count == named.count, "a key is listed twice")
        // A key the table does not name is refused as unknown.
        let file = Data(#"{"projectToken": "p", "baseURL": "https://api.example.com", "authorisation": "Token k"}"#.utf8)
        #expect(throws: ConfigurationError.unknownKeys(["authorisation"])) {
            try AuthorizationConfiguration(data: file, format: .json)
        }
    }
}
