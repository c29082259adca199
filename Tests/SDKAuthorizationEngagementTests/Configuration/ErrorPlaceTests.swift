import Foundation
import SDKAuthorizationTesting
import EngagementTestSupport
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationModeKit
@testable import SDKAuthorizationEngagement

/// Every configuration error says where: the file, and for a malformed one the line and column;
/// the six lookup messages the Exponea SDKs document stay word for word, the file in `path`.
@Suite("Configuration errors name their file, line and column", .hangLimit)
struct ErrorPlaceTests {
    /// A folder of its own, removed when the test is done.
    final class Folder {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("error-place-\(UUID().uuidString)", isDirectory: true)
        init() throws { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }
        deinit { try? FileManager.default.removeItem(at: url) }

        func write(_ name: String, _ text: String) throws -> URL {
            let file = url.appendingPathComponent(name)
            try Data(text.utf8).write(to: file)
            return file
        }
    }

    private func error(_ body: () throws -> Void) -> ConfigurationError? {
        do {
            try body()
            return nil
        } catch {
            return error as? ConfigurationError
        }
    }

    @Test func aTrailingCommaIsMalformedAtItsFileLineAndColumn() throws {
        let folder = try Folder()
        let text = "{\n  \"projectToken\": \"p1\",\n  \"baseURL\": \"https://api.example.com\",\n}\n"
        let url = try folder.write("authorization.json", text)
        let fromFile = error { _ = try AuthorizationConfiguration(contentsOf: url) }
        #expect(fromFile?.code == .malformedFile)
        #expect(fromFile?.message == "The configuration file is malformed: expected a JSON object of configuration keys. (in 'authorization.json', line 4, column 1)")
        #expect(fromFile?.path == url.path)
        // Read from bytes, there is no file to name, but there is a line and a column.
        let fromData = error { _ = try AuthorizationConfiguration(data: Data(text.utf8), format: .json) }
        #expect(fromData?.message == "The configuration file is malformed: expected a JSON object of configuration keys. (at line 4, column 1)")
        // A column counts characters, not bytes.
        let wide = error { _ = try AuthorizationConfiguration(data: Data("{\"é\": 1 2}".utf8), format: .json) }
        #expect(wide?.message == "The configuration file is malformed: expected a JSON object of configuration keys. (at line 1, column 9)")
    }

    @Test func jsonThatIsNotAnObjectIsMalformedWhereItsValueStarts() throws {
        let folder = try Folder()
        let url = try folder.write("authorization.json", "\n  [1, 2]")
        #expect(error { _ = try AuthorizationConfiguration(contentsOf: url) }?.message
            == "The configuration file is malformed: expected a JSON object of configuration keys. (in 'authorization.json', line 2, column 3)")
    }

    @Test func aMalformedPropertyListNamesItsFile() throws {
        let folder = try Folder()
        let url = try folder.write("authorization.plist", "<?xml version=\"1.0\"?><plist><array></array></plist>")
        #expect(error { _ = try AuthorizationConfiguration(contentsOf: url) }?.message
            == "The configuration file is malformed: expected a property list whose root is a dictionary of configuration keys with plain values. (in 'authorization.plist')")
    }

    @Test func aMissingKeyNamesTheFileItWasReadFrom() throws {
        let folder = try Folder()
        let url = try folder.write("authorization.json", #"{"projectToken": "p1", "baseURL": "https://api.example.com"}"#)
        let configuration = try AuthorizationConfiguration(contentsOf: url)
        let sink = RecordingDiagnosticsSink()
        let missing = error { _ = try AuthorizedHTTPClient(configuration: configuration, transport: RecordingTransport(), diagnostics: sink) }
        #expect(missing?.code == .missingKey)
        #expect(missing?.key == "authorization")
        #expect(missing?.message == "The configuration key 'authorization' is required. (in 'authorization.json')")
        #expect(missing?.path == url.path)
        // A key the file itself lacks, too.
        let noToken = try folder.write("sdkauth.json", #"{"baseURL": "https://api.example.com"}"#)
        #expect(error { _ = try AuthorizationConfiguration(contentsOf: noToken) }?.message
            == "The configuration key 'projectToken' is required. (in 'sdkauth.json')")
        // A configuration made in code has no file to name.
        let inCode = try AuthorizationConfiguration(projectToken: "p1", baseURL: "https://api.example.com", authorization: nil)
        #expect(error { _ = try AuthorizedHTTPClient(configuration: inCode, transport: RecordingTransport(), diagnostics: sink) }?.message
            == "The configuration key 'authorization' is required.")
        // Where a configuration was read from is not part of its value.
        #expect(configuration == (try AuthorizationConfiguration(projectToken: "p1", baseURL: "https://api.example.com", authorization: nil)))
    }

    @Test func aDocumentedLookupMessageStaysWordForWordAndCarriesItsFileInPath() throws {
        let folder = try Folder()
        let url = try folder.write("authorization.json",
                                   #"{"projectToken": "p1", "baseURL": "https://api.example.com", "authorization": "Token k1", "advancedAuthEnabled": true}"#)
        let configuration = try AuthorizationConfiguration(contentsOf: url)
        let lookup = error {
            _ = try AuthorizedHTTPClient(configuration: configuration, registry: ProviderRegistry(typeLookup: { _ in nil }),
                                         transport: RecordingTransport(), diagnostics: RecordingDiagnosticsSink())
        }
        #expect(lookup?.message == "Advanced authorization flag has been enabled without provider")
        #expect(lookup == .advancedAuthEnabledWithoutProvider)
        #expect(lookup?.path == url.path)
    }

    @Test func aMisspeltProviderClassNameGetsDidYouMeanAsAMisspeltModeDoes() throws {
        let registry = ProviderRegistry(typeLookup: { _ in nil })
        registry.register(ExampleAuthProvider.self, as: "ExponeaAuthProvider")
        let configuration = try engagementConfiguration(advancedAuthEnabled: true,
                                                        providerLookup: .registeredClassName("EngagementTestSupport.ExampleAuthProvidr"))
        let misspelt = error {
            _ = try AuthorizedHTTPClient(configuration: configuration, registry: registry, transport: RecordingTransport(), diagnostics: RecordingDiagnosticsSink())
        }
        #expect(misspelt?.code == .registeredClassNotFound)
        #expect(misspelt?.message == #"Registered EngagementTestSupport.ExampleAuthProvidr class has not been found ("EngagementTestSupport.ExampleAuthProvidr" is not registered; did you mean "EngagementTestSupport.ExampleAuthProvider"?)"#)
    }
}
