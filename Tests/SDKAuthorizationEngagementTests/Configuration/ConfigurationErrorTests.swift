import Foundation
import EngagementTestSupport
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationEngagement

extension ConfigurationError.Code {
    /// A code a later module could add, as these tests do.
    static let addedInAnExtension = ConfigurationError.Code(rawValue: "addedInAnExtension")
}

@Suite("Configuration errors", .hangLimit)
struct ConfigurationErrorTests {
    @Test func codesAreStableStrings() {
        let codes: [(ConfigurationError.Code, String)] = [
            (.basicAuthenticationNotSupported, "basicAuthenticationNotSupported"), (.emptyCredential, "emptyCredential"),
            (.credentialContainsControlCharacters, "credentialContainsControlCharacters"), (.emptyProjectToken, "emptyProjectToken"),
            (.invalidBaseURL, "invalidBaseURL"), (.unknownKeys, "unknownKeys"), (.wrongType, "wrongType"), (.missingKey, "missingKey"),
            (.invalidValue, "invalidValue"), (.malformedFile, "malformedFile"), (.unreadableFile, "unreadableFile"),
            (.fileTooLarge, "fileTooLarge"), (.duplicateKey, "duplicateKey"), (.surroundingWhitespace, "surroundingWhitespace"),
            (.advancedAuthEnabledWithoutProvider, "advancedAuthEnabledWithoutProvider"), (.providerIsNotNSObject, "providerIsNotNSObject"),
            (.providerDoesNotConform, "providerDoesNotConform"), (.advancedAuthEnabledButProviderNotNamed, "advancedAuthEnabledButProviderNotNamed"),
            (.registeredClassNotFound, "registeredClassNotFound"), (.registeredClassDoesNotImplement, "registeredClassDoesNotImplement"),
            (.providerCreationFailed, "providerCreationFailed"), (.customerTokenEndpointsWithoutAdvancedAuth, "customerTokenEndpointsWithoutAdvancedAuth"),
            (.providerWithoutAdvancedAuth, "providerWithoutAdvancedAuth"), (.missingProvider, "missingProvider"),
            (.duplicateEndpoint, "duplicateEndpoint"), (.unknownEndpoint, "unknownEndpoint"),
        ]
        for (code, name) in codes {
            #expect(code.rawValue == name)
            #expect("\(code)" == name)
            #expect(ConfigurationError.Code(rawValue: name) == code)
        }
        #expect(Set(codes.map(\.0)).count == codes.count)
    }

    @Test func anErrorFromAFactoryHasTheCodeTheMessageAndTheContextOfTheOldCase() {
        let missing = ConfigurationError.missingKey("projectToken")
        #expect(missing.code == .missingKey)
        #expect(missing.key == "projectToken")
        #expect(missing.message == "The configuration key 'projectToken' is required.")

        let invalid = ConfigurationError.invalidValue(key: "refreshTimeout", reason: "must be from 1 to 86400 seconds")
        #expect(invalid.code == .invalidValue)
        #expect(invalid.key == "refreshTimeout")
        #expect(invalid.reason == "must be from 1 to 86400 seconds")
        #expect(invalid.message == "The configuration key 'refreshTimeout' is invalid: must be from 1 to 86400 seconds.")

        let wrongType = ConfigurationError.wrongType(key: "advancedAuthEnabled", expected: "a Boolean")
        #expect(wrongType.code == .wrongType && wrongType.key == "advancedAuthEnabled" && wrongType.expected == "a Boolean")
        #expect(wrongType.message == "The configuration key 'advancedAuthEnabled' must be a Boolean.")

        let unreadable = ConfigurationError.unreadableFile(path: "/etc/auth.json", reason: "no such file")
        #expect(unreadable.code == .unreadableFile && unreadable.path == "/etc/auth.json" && unreadable.reason == "no such file")
        #expect(unreadable.message == "The configuration file at '/etc/auth.json' could not be read: no such file.")

        let tooLarge = ConfigurationError.fileTooLarge(limit: 65_536)
        #expect(tooLarge.code == .fileTooLarge && tooLarge.limit == 65_536)
        #expect(tooLarge.message == "The configuration file is larger than 65536 bytes; it was not read.")

        let unknown = ConfigurationError.unknownKeys(["token", "advancedAuth"])
        #expect(unknown.code == .unknownKeys && unknown.keys == ["token", "advancedAuth"])
        #expect(unknown.message == "Unknown configuration keys: 'advancedAuth', 'token'.")

        let empty = ConfigurationError.emptyCredential(field: "ID token")
        #expect(empty.code == .emptyCredential && empty.field == "ID token")
        #expect(empty.message == "The ID token is empty; a credential must not be empty.")

        let missingProvider = ConfigurationError.missingProvider(scheme: "bearer", endpoints: ["appInboxFetch", "customerAttributes"])
        #expect(missingProvider.scheme == "bearer" && missingProvider.endpoints == ["appInboxFetch", "customerAttributes"])
        #expect(missingProvider.message
            == "The policy sends bearer credentials (appInboxFetch, customerAttributes), but no provider is given for the bearer scheme.")

        let duplicate = ConfigurationError.duplicateEndpoint("appInboxFetch")
        #expect(duplicate.code == .duplicateEndpoint && duplicate.endpoint == "appInboxFetch")
        #expect(duplicate.message == "The endpoint appInboxFetch is already in the policy.")

        // Codes without context carry none.
        let basic = ConfigurationError.basicAuthenticationNotSupported
        #expect(basic.code == .basicAuthenticationNotSupported)
        #expect(basic.message == "Basic authentication is not supported by mobile SDK for security reasons.")
        #expect(basic.key == nil && basic.field == nil && basic.name == nil && basic.reason == nil && basic.limit == nil && basic.keys == nil)
    }

    /// The provider-lookup messages are the vendors' documented ones (SPEC §2), byte for byte.
    @Test func providerLookupErrorsKeepTheVendorsDocumentedMessages() {
        let cases: [(ConfigurationError, ConfigurationError.Code, String)] = [
            (.advancedAuthEnabledWithoutProvider, .advancedAuthEnabledWithoutProvider, "Advanced authorization flag has been enabled without provider"),
            (.providerIsNotNSObject(name: "ExponeaAuthProvider"), .providerIsNotNSObject, "Class ExponeaAuthProvider does not conform to NSObject"),
            (.providerDoesNotConform(name: "ExponeaAuthProvider"), .providerDoesNotConform,
             "Class ExponeaAuthProvider does not conform to AuthorizationProviderType"),
            (.advancedAuthEnabledButProviderNotNamed, .advancedAuthEnabledButProviderNotNamed, "Advanced auth has been enabled but provider has not been found"),
            (.registeredClassNotFound(name: "MyApp.ExampleAuthProvider"), .registeredClassNotFound,
             "Registered MyApp.ExampleAuthProvider class has not been found"),
            (.registeredClassDoesNotImplement(name: "MyApp.ExampleAuthProvider"), .registeredClassDoesNotImplement,
             "Registered MyApp.ExampleAuthProvider class has to implement SDKAuthorization.AuthorizationProviderType"),
        ]
        for (error, code, message) in cases {
            #expect(error.code == code)
            #expect(error.message == message)
            #expect(error.description == message)
        }
        #expect(ConfigurationError.registeredClassNotFound(name: "MyApp.ExampleAuthProvider").name == "MyApp.ExampleAuthProvider")
    }

    @Test func localizedDescriptionAndErrorDescriptionAreTheMessage() {
        let errors: [ConfigurationError] = [
            .missingKey("projectToken"), .emptyProjectToken, .providerWithoutAdvancedAuth, .registeredClassNotFound(name: "MyApp.ExampleAuthProvider"),
        ]
        for error in errors {
            #expect(error.errorDescription == error.message)
            #expect(error.localizedDescription == error.message)
            #expect((error as any Error).localizedDescription == error.message)
            #expect(String(describing: error) == error.message)
            #expect("\(error)" == error.message)
        }
    }

    @Test func equalityComparesTheCodeAndTheMessage() {
        #expect(ConfigurationError.missingKey("a") == .missingKey("a"))
        #expect(ConfigurationError.missingKey("a") != .missingKey("b"))
        // The message lists unknown keys sorted, so the order they were found in does not matter.
        #expect(ConfigurationError.unknownKeys(["a", "b"]) == .unknownKeys(["b", "a"]))
        // The same message under another code is another error.
        let message = ConfigurationError.emptyProjectToken.message
        #expect(ConfigurationError(.addedInAnExtension, message) != .emptyProjectToken)
    }

    @Test func aCodeAddedInAnExtensionWorksWithEqualityAndInASwitch() {
        let error = ConfigurationError(.addedInAnExtension, "A later module refused this.")
        #expect(error.code == .addedInAnExtension)
        #expect(error.code != .missingKey)
        #expect(error.message == "A later module refused this.")
        #expect(error == ConfigurationError(.addedInAnExtension, "A later module refused this."))
        func name(_ code: ConfigurationError.Code) -> String {
            switch code {
            case .missingKey: "missing"
            case .addedInAnExtension: "added"
            default: "other"
            }
        }
        #expect(name(error.code) == "added")
        #expect(name(ConfigurationError.missingKey("k").code) == "missing")
        #expect(name(ConfigurationError.emptyProjectToken.code) == "other")
    }

    @Test func descriptionDebugDescriptionAndDumpOfABaseURLWithAPasswordHoldNoSecret() {
        let secret = "s3cr3t-pa55"
        for baseURL in ["https://user:\(secret)@api.example.com", "ftp://api.example.com/?key=\(secret)", "https://api.example.com/#\(secret)"] {
            do {
                _ = try AuthorizationConfiguration(projectToken: "p1", baseURL: baseURL, authorization: "Token k")
                Issue.record("accepted \(baseURL)")
            } catch {
                var dumped = ""
                dump(error, to: &dumped)
                for text in [String(describing: error), String(reflecting: error), error.localizedDescription, dumped] {
                    #expect(!text.contains(secret), "\(text)")
                }
                #expect(dumped.contains(error.code.rawValue))
                #expect(String(reflecting: error) == "ConfigurationError(\(error.code)): \(error.message)")
            }
        }
    }
}
