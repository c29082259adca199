import Foundation
import EngagementTestSupport
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationEngagement

@Suite("Configuration from a file", .hangLimit)
struct ConfigurationFileTests {
    private func json(_ text: String) throws(ConfigurationError) -> AuthorizationConfiguration {
        try AuthorizationConfiguration(data: Data(text.utf8), format: .json)
    }

    @Test func completeJSONFileIsRead() throws {
        let configuration = try json("""
        {"projectToken": "p1", "baseURL": "https://api.example.com", "authorization": "Token k1",
         "advancedAuthEnabled": true, "providerConvention": "registeredClass",
         "providerName": "MyApp.ExampleAuthProvider", "customerTokenCacheLeeway": 30}
        """)
        #expect(configuration.projectToken == "p1")
        #expect(configuration.baseURL.absoluteString == "https://api.example.com")
        #expect(configuration.authorization?.headerValue == "Token k1")
        #expect(configuration.advancedAuthEnabled)
        #expect(configuration.providerLookup == .registeredClassName("MyApp.ExampleAuthProvider"))
        #expect(configuration.customerTokenCaching == .honoringExpiry(leeway: 30))
    }

    @Test func theFlutterSpellingAuthorizationTokenIsReadAsAuthorization() throws {
        let configuration = try json(#"{"projectToken": "p1", "baseURL": "https://api.example.com", "authorizationToken": "Token k1"}"#)
        #expect(configuration.authorization?.headerValue == "Token k1")
    }

    @Test func aFileNamingBothSpellingsOfTheAuthorizationIsRefused() {
        #expect(throws: ConfigurationError.invalidValue(key: "authorizationToken", reason: "the file also names authorization; authorizationToken is the Flutter SDK's spelling of the same key, keep one")) {
            try json(#"{"projectToken": "p1", "baseURL": "https://api.example.com", "authorization": "Token k1", "authorizationToken": "Token k2"}"#)
        }
    }

    @Test(arguments: [
        ("\"Token a b\"", ConfigurationError.invalidValue(key: "authorizationToken", reason: "the authorization token holds white space; a key or token is one word")),
        ("\"Bearer a,b\"", ConfigurationError.invalidValue(key: "authorizationToken", reason: "the authorization bearer token is not an RFC 6750 bearer token")),
        ("\"Token k1 \"", ConfigurationError.surroundingWhitespace(key: "authorizationToken")),
        ("42", ConfigurationError.wrongType(key: "authorizationToken", expected: "a string")),
        ("\"Basic dXNlcjpwYXNz\"", ConfigurationError.basicAuthenticationNotSupported),
        ("\"Token a\\r\\nX: y\"", ConfigurationError.credentialContainsControlCharacters(field: "authorization token")),
        ("\"Token key:with!punctuation\"", ConfigurationError.invalidValue(key: "authorizationToken", reason: "the authorization token is not an RFC 7235 token68 (letters, digits, -._~+/ and a trailing =)")),
    ])
    func aBadValueUnderTheFlutterSpellingIsRefusedNamingThatKey(value: String, error: ConfigurationError) {
        #expect(throws: error) {
            try json(#"{"projectToken": "p1", "baseURL": "https://api.example.com", "authorizationToken": \#(value)}"#)
        }
    }

    @Test func minimalJSONFileGetsTheDefaults() throws {
        let configuration = try json(#"{"projectToken": "p1", "baseURL": "http://127.0.0.1:9000"}"#)
        #expect(configuration.authorization == nil)
        #expect(!configuration.advancedAuthEnabled)
        #expect(configuration.providerLookup == .implicitName("ExponeaAuthProvider"))
        #expect(configuration.customerTokenCaching == .disabled)
    }

    @Test func propertyListFileIsRead() throws {
        let plist = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0"><dict>
          <key>projectToken</key><string>p1</string>
          <key>baseURL</key><string>https://api.example.com</string>
          <key>authorization</key><string>Bearer a.b.c</string>
          <key>advancedAuthEnabled</key><true/>
          <key>providerName</key><string>AcmeAuthProvider</string>
        </dict></plist>
        """
        let configuration = try AuthorizationConfiguration(data: Data(plist.utf8), format: .propertyList)
        #expect(configuration.authorization?.headerValue == "Bearer a.b.c")
        #expect(configuration.advancedAuthEnabled)
        #expect(configuration.providerLookup == .implicitName("AcmeAuthProvider"))
    }

    @Test func filesAreReadFromDiskByExtensionAndByContent() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let text = #"{"projectToken": "p1", "baseURL": "https://api.example.com", "authorization": "k"}"#
        for name in ["auth.json", "auth.conf"] {
            let url = directory.appendingPathComponent(name)
            try Data(text.utf8).write(to: url)
            #expect(try AuthorizationConfiguration(contentsOf: url).authorization?.headerValue == "Token k")
        }
    }

    @Test func missingFileIsUnreadable() {
        do {
            _ = try AuthorizationConfiguration(contentsOf: URL(fileURLWithPath: "/nonexistent/auth.json"))
            Issue.record("no error")
        } catch {
            #expect(error.code == .unreadableFile, "\(error)")
            #expect(error.path == "/nonexistent/auth.json")
        }
    }

    @Test(arguments: ["", "{", "[1, 2]", "\"text\"", "{\"projectToken\": }", "null"])
    func malformedJSONIsRefused(text: String) {
        do {
            _ = try json(text)
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.code == .malformedFile, "\(error)")
        }
    }

    @Test func malformedPropertyListIsRefused() {
        do {
            _ = try AuthorizationConfiguration(data: Data("<?xml version=\"1.0\"?><plist><dict><key>a".utf8), format: .propertyList)
            Issue.record("accepted")
        } catch {
            #expect(error.code == .malformedFile, "\(error)")
        }
    }

    @Test func unknownKeysAreRefusedByName() {
        #expect(throws: ConfigurationError.unknownKeys(["advancedAuth", "token"])) {
            try json(#"{"projectToken": "p", "baseURL": "https://a.example", "token": "x", "advancedAuth": true}"#)
        }
    }

    @Test func wrongTypesAreRefusedByKey() {
        #expect(throws: ConfigurationError.wrongType(key: "advancedAuthEnabled", expected: "a boolean")) {
            try json(#"{"projectToken": "p", "baseURL": "https://a.example", "advancedAuthEnabled": "yes"}"#)
        }
        #expect(throws: ConfigurationError.wrongType(key: "advancedAuthEnabled", expected: "a boolean")) {
            try json(#"{"projectToken": "p", "baseURL": "https://a.example", "advancedAuthEnabled": 1}"#)
        }
        #expect(throws: ConfigurationError.wrongType(key: "projectToken", expected: "a string")) {
            try json(#"{"projectToken": 42, "baseURL": "https://a.example"}"#)
        }
        #expect(throws: ConfigurationError.wrongType(key: "customerTokenCacheLeeway", expected: "a number of seconds")) {
            try json(#"{"projectToken": "p", "baseURL": "https://a.example", "customerTokenCacheLeeway": "60"}"#)
        }
    }

    @Test func missingRequiredKeysAreNamed() {
        #expect(throws: ConfigurationError.missingKey("projectToken")) { try json(#"{"baseURL": "https://a.example"}"#) }
        #expect(throws: ConfigurationError.missingKey("baseURL")) { try json(#"{"projectToken": "p"}"#) }
    }

    @Test func unknownProviderConventionIsRefused() {
        #expect(throws: ConfigurationError.invalidValue(key: "providerConvention", reason: "expected 'implicitName' or 'registeredClass'")) {
            try json(#"{"projectToken": "p", "baseURL": "https://a.example", "providerConvention": "manifest"}"#)
        }
    }

    @Test func badValuesInAFileGetTheSameErrorsAsInCode() {
        #expect(throws: ConfigurationError.basicAuthenticationNotSupported) {
            try json(#"{"projectToken": "p", "baseURL": "https://a.example", "authorization": "Basic abc"}"#)
        }
        #expect(throws: ConfigurationError.invalidBaseURL("ws://a.example")) {
            try json(#"{"projectToken": "p", "baseURL": "ws://a.example"}"#)
        }
        #expect(throws: ConfigurationError.credentialContainsControlCharacters(field: "authorization token")) {
            try json(#"{"projectToken": "p", "baseURL": "https://a.example", "authorization": "Token a\r\nb"}"#)
        }
    }
}
