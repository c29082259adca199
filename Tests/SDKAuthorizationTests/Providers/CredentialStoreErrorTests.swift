import Foundation
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationModeKit
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension CredentialStoreError.Code {
    /// A code a later version could add, as these tests do.
    static let addedInAnExtension = CredentialStoreError.Code(rawValue: "addedInAnExtension")
}

@Suite("File credential store: errors", .hangLimit)
struct CredentialStoreErrorTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sdkauth-store-\(UUID().uuidString)", isDirectory: true)
    let secret = "auth-token-s3cr3t-4f9c2e"

    func removeDirectory() { try? FileManager.default.removeItem(at: directory) }

    /// Every text of `error` a log or a crash report may hold.
    func texts(_ error: CredentialStoreError) -> [String] {
        var dumped = ""
        dump(error, to: &dumped)
        var mirrored = ""
        dump(error as any Error, to: &mirrored)
        return [String(describing: error), String(reflecting: error), error.localizedDescription, (error as any Error).localizedDescription,
                error.message, error.reason, dumped, mirrored]
    }

    @Test func codesAreStableStrings() {
        let codes: [(CredentialStoreError.Code, String)] = [
            (.invalidIdentity, "invalidIdentity"), (.unsafeDirectory, "unsafeDirectory"), (.unsafeFile, "unsafeFile"),
            (.unreadableCredential, "unreadableCredential"), (.fileSystemFailed, "fileSystemFailed"),
        ]
        for (code, name) in codes {
            #expect(code.rawValue == name)
            #expect("\(code)" == name)
            #expect(CredentialStoreError.Code(rawValue: name) == code)
        }
        #expect(Set(codes.map(\.0)).count == codes.count)
    }

    @Test func anErrorFromAFactoryHasTheCodeAndTheMessageTheStoreAlwaysGave() {
        let identity = CredentialStoreError.invalidIdentity
        #expect(identity.code == .invalidIdentity)
        #expect(identity.reason == "an identity has 1 to 100 UTF-8 bytes")
        #expect(identity.message == "Credential store: an identity has 1 to 100 UTF-8 bytes")

        let unreadable = CredentialStoreError.unreadableCredential
        #expect(unreadable.code == .unreadableCredential)
        #expect(unreadable.message == "Credential store: the stored credential for this identity is unreadable; it is ignored")

        let failed = CredentialStoreError.fileSystemFailed("could not remove the stored credential (errno 13)")
        #expect(failed.code == .fileSystemFailed)
        #expect(failed.message == "Credential store: could not remove the stored credential (errno 13)")
        #expect(CredentialStoreError.unsafeFile("x").code == .unsafeFile)
        #expect(CredentialStoreError.unsafeDirectory("x").code == .unsafeDirectory)
    }

    @Test func anIdentityOutOfRangeIsRefusedWithItsCode() {
        let store = FileCredentialStore(namespace: .testing, directory: directory)
        for identity in ["", String(repeating: "a", count: 101)] {
            #expect(throws: CredentialStoreError.invalidIdentity) { try store.load(identity: identity) }
            #expect(throws: CredentialStoreError.invalidIdentity) { try store.remove(identity: identity) }
        }
    }

    @Test func localizedDescriptionAndErrorDescriptionAreTheMessage() {
        for error in [CredentialStoreError.invalidIdentity, .unreadableCredential, .fileSystemFailed("could not read the credential file (errno 5)")] {
            #expect(error.errorDescription == error.message)
            #expect((error as any Error).localizedDescription == error.message)
            #expect(String(describing: error) == error.message)
            #expect(String(reflecting: error) == "CredentialStoreError(\(error.code)): \(error.message)")
        }
    }

    @Test func equalityComparesTheCodeAndTheMessage() {
        #expect(CredentialStoreError.fileSystemFailed("a") == .fileSystemFailed("a"))
        #expect(CredentialStoreError.fileSystemFailed("a") != .fileSystemFailed("b"))
        #expect(CredentialStoreError.unsafeFile("a") != .unsafeDirectory("a"))
    }

    @Test func aCodeAddedInAnExtensionWorksWithEqualityAndInASwitch() {
        let error = CredentialStoreError(.addedInAnExtension, reason: "a later version refused this")
        #expect(error.code == .addedInAnExtension)
        #expect(error.code != .unsafeFile)
        #expect(error.message == "Credential store: a later version refused this")
        #expect(error == CredentialStoreError(.addedInAnExtension, reason: "a later version refused this"))
        func name(_ code: CredentialStoreError.Code) -> String {
            switch code {
            case .unsafeFile: "unsafe"
            case .addedInAnExtension: "added"
            default: "other"
            }
        }
        #expect(name(error.code) == "added")
        #expect(name(CredentialStoreError.unsafeFile("x").code) == "unsafe")
        #expect(name(CredentialStoreError.invalidIdentity.code) == "other")
    }

    @Test func anUnreadableCredentialFileHoldingATokenLeavesItOutOfEveryText() throws {
        defer { removeDirectory() }
        let store = FileCredentialStore(namespace: .testing, directory: directory)
        try store.save(StoredCredential(token: secret, expiresAt: nil), identity: "user-7")
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: directory.path).first { $0.hasPrefix("credential-") })
        let file = directory.appendingPathComponent(name)
        // Another identity's credential under this identity's name, then one cut short: neither is believed.
        for contents in [#"{"identity":"user-8","credential":{"token":"\#(secret)"}}"#, #"{"identity":"user-7","credential":{"token":"\#(secret)""#] {
            try Data(contents.utf8).write(to: file)
            #expect(chmod(file.path, 0o600) == 0)
            do {
                _ = try store.load(identity: "user-7")
                Issue.record("an unreadable credential was believed")
            } catch let error as CredentialStoreError {
                #expect(error.code == .unreadableCredential)
                for text in texts(error) { #expect(!text.contains(secret), "\(text)") }
            }
        }
    }

    @Test func aCredentialRefusedForItsPermissionsOrItsDirectoryLeavesTheTokenOutOfEveryText() throws {
        defer { removeDirectory() }
        let store = FileCredentialStore(namespace: .testing, directory: directory)
        try store.save(StoredCredential(token: secret, expiresAt: nil), identity: "user-7")
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: directory.path).first { $0.hasPrefix("credential-") })
        #expect(chmod(directory.appendingPathComponent(name).path, 0o644) == 0)
        do {
            _ = try store.load(identity: "user-7")
            Issue.record("a 0644 credential file was believed")
        } catch let error as CredentialStoreError {
            #expect(error.code == .unsafeFile)
            for text in texts(error) { #expect(!text.contains(secret), "\(text)") }
        }
        #expect(chmod(directory.path, 0o755) == 0)
        do {
            try store.save(StoredCredential(token: secret, expiresAt: nil), identity: "user-7")
            Issue.record("saved into a 0755 directory")
        } catch let error as CredentialStoreError {
            #expect(error.code == .unsafeDirectory)
            for text in texts(error) { #expect(!text.contains(secret), "\(text)") }
        }
    }
}

@Suite("The platform's credential store", .hangLimit)
struct PlatformCredentialStoreTests {
    @Test func thePlatformStoreIsTheFileStoreWhereThereIsNoKeychain() throws {
        #if canImport(Security)
        #expect(PlatformCredentialStore(namespace: .testing).service == "SDKAuthorization.credentials.com.example.tests")
        #else
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sdkauth-platform-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store: any CredentialStore = PlatformCredentialStore(namespace: .testing, directory: directory)
        try store.save(StoredCredential(token: "t", expiresAt: nil), identity: "user-7")
        #expect(try store.load(identity: "user-7")?.token == "t")
        #expect(PlatformCredentialStore(namespace: .testing).directory == FileCredentialStore.defaultDirectory(for: .testing))
        #endif
    }

    @Test func aKeychainFailureNamesTheCallAndTheStatusAndNoToken() {
        let error = CredentialStoreError.keychainFailed("save", status: -25_299)
        #expect(error.code == .keychainFailed)
        #expect(error.message == "Credential store: could not save the Keychain item (OSStatus -25299)")
    }
}
