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

/// The file store trusts neither its directory nor what it finds there.
@Suite("File credential store: untrusted directory", .hangLimit)
struct FileCredentialStoreTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sdkauth-store-\(UUID().uuidString)", isDirectory: true)
    let credential = StoredCredential(token: "auth-token-secret", expiresAt: Date(timeIntervalSince1970: 1_900_000_000))

    func removeDirectory() { try? FileManager.default.removeItem(at: directory) }

    /// The path the store uses for `identity` (its hexadecimal form).
    func credentialFile(_ identity: String) throws -> URL {
        let store = FileCredentialStore(namespace: .testing, directory: directory)
        try store.save(credential, identity: identity)
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: directory.path).first { $0.hasPrefix("credential-") })
        return directory.appendingPathComponent(name)
    }

    @Test func twoSDKsWhoseStoresShareAFolderNeitherOverwriteNorRemoveEachOthersTokens() throws {
        defer { removeDirectory() }
        let mine = FileCredentialStore(namespace: .testing, directory: directory)
        let other = try CredentialNamespace("com.example.other-sdk")
        let theirs = FileCredentialStore(namespace: other, directory: directory)
        let kind = CredentialKind.tokenExchange.scoped(to: "https://platform.example.com/ccai/exchange")
        try theirs.save(StoredCredential(token: "their-token", expiresAt: nil), identity: "user-7", kind: kind)
        #expect {
            try mine.save(StoredCredential(token: "my-token", expiresAt: nil), identity: "user-7", kind: kind)
        } throws: { error in
            guard let error = error as? CredentialStoreError else { return false }
            return error.code == .foreignCredential && error.message.contains("com.example.other-sdk") && !error.message.contains("their-token")
        }
        // My logout leaves their token.
        try mine.remove(identity: "user-7", kind: kind)
        #expect(try theirs.load(identity: "user-7", kind: kind)?.token == "their-token", "neither overwritten nor removed by the other SDK")
        // Their own logout removes it, and then the slot is mine to write.
        try theirs.remove(identity: "user-7", kind: kind)
        try mine.save(StoredCredential(token: "my-token", expiresAt: nil), identity: "user-7", kind: kind)
        #expect(try mine.load(identity: "user-7", kind: kind)?.token == "my-token")
    }

    @Test func aSlotHoldingAnUnreadableOrOwnerlessCredentialIsStillReplacedAndRemovedByItsKind() throws {
        defer { removeDirectory() }
        let store = FileCredentialStore(namespace: .testing, directory: directory)
        try store.save(StoredCredential(token: "t", expiresAt: nil), identity: "user-7", kind: .idToken)
        let file = try #require(try FileManager.default.contentsOfDirectory(atPath: directory.path).first { $0.hasPrefix("credential-idtoken-") })
        try Data("not json".utf8).write(to: directory.appendingPathComponent(file))
        try store.save(StoredCredential(token: "new", expiresAt: nil), identity: "user-7", kind: .idToken)
        #expect(try store.load(identity: "user-7", kind: .idToken)?.token == "new")
        try Data("not json".utf8).write(to: directory.appendingPathComponent(file))
        try store.remove(identity: "user-7", kind: .idToken)
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent(file).path))
    }

    @Test func aSaveThatACrashInterruptedLeavesNoTemporaryCopyOfTheTokenPastTheNextStoreOpen() throws {
        defer { removeDirectory() }
        let store = FileCredentialStore(namespace: .testing, directory: directory)
        try store.save(credential, identity: "user-7", kind: .idToken)
        // What a save killed between its write and its rename leaves: a temporary file holding the token, unlocked.
        let leftover = directory.appendingPathComponent("\(FileCredentialStore.temporaryPrefix)\(UUID().uuidString)")
        #expect(FileManager.default.createFile(atPath: leftover.path, contents: Data(#"{"token":"auth-token-secret"}"#.utf8), attributes: [.posixPermissions: 0o600]))
        // A save running now in another process: its file is locked while it writes.
        let running = directory.appendingPathComponent("\(FileCredentialStore.temporaryPrefix)\(UUID().uuidString)")
        let writer = open(running.path, O_CREAT | O_EXCL | O_WRONLY, 0o600)
        #expect(writer >= 0 && flock(writer, LOCK_EX) == 0)
        defer { close(writer) }
        // The next launch: the first call of a new store instance.
        let relaunched = FileCredentialStore(namespace: .testing, directory: directory)
        #expect(try relaunched.load(identity: "user-7", kind: .idToken)?.token == credential.token)
        #expect(!FileManager.default.fileExists(atPath: leftover.path), "the interrupted save's copy of the token is gone")
        #expect(FileManager.default.fileExists(atPath: running.path), "a save still running keeps its file")
        // And a save of its own leaves nothing behind.
        try relaunched.save(credential, identity: "user-8", kind: .idToken)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix(FileCredentialStore.temporaryPrefix) }
        #expect(names == [running.lastPathComponent])
    }

    @Test func aCredentialTooLargeToReadBackIsRefusedAtSaveAndTheOneBeforeIsKept() throws {
        defer { removeDirectory() }
        let store = FileCredentialStore(namespace: .testing, directory: directory)
        try store.save(credential, identity: "user-7")
        let huge = StoredCredential(token: String(repeating: "a", count: 70_000), expiresAt: nil)
        #expect { try store.save(huge, identity: "user-7") } throws: { ($0 as? CredentialStoreError)?.code == .credentialTooLarge }
        #expect(try store.load(identity: "user-7") == credential, "nothing was written that the store could not read back")
    }

    @Test func aCredentialOfExactlySixtyFourKiBIsSavedAndReadBackAndOneByteMoreIsRefused() throws {
        defer { removeDirectory() }
        let store = FileCredentialStore(namespace: .testing, directory: directory)
        try checkCredentialSizeLimitAtItsEdge(save: { try store.save($0, identity: "user-7") }, load: { try store.load(identity: "user-7") })
    }

    @Test func aDirectoryWritableByOthersIsRefusedForSavingAndLoading() throws {
        defer { removeDirectory() }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        #expect(chmod(directory.path, 0o777) == 0)
        let store = FileCredentialStore(namespace: .testing, directory: directory)
        do {
            try store.save(credential, identity: "user-7")
            Issue.record("saved into a 0777 directory")
        } catch let error as CredentialStoreError {
            #expect(error.code == .unsafeDirectory)
            #expect(error.reason.contains("group or others"))
        }
        #expect(throws: CredentialStoreError.self) { try store.load(identity: "user-7") }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }

    @Test func aNewDirectoryIsCreatedOwnerOnly() throws {
        defer { removeDirectory() }
        let nested = directory.appendingPathComponent("credentials", isDirectory: true)
        try FileCredentialStore(namespace: .testing, directory: nested).save(credential, identity: "user-7")
        #expect(try FileManager.default.attributesOfItem(atPath: nested.path)[.posixPermissions] as? Int == 0o700)
    }

    @Test func aCredentialFileReadableByOthersIsNotBelieved() throws {
        defer { removeDirectory() }
        let file = try credentialFile("user-7")
        #expect(chmod(file.path, 0o666) == 0)
        do {
            _ = try FileCredentialStore(namespace: .testing, directory: directory).load(identity: "user-7")
            Issue.record("a 0666 credential file was believed")
        } catch let error as CredentialStoreError {
            #expect(error.code == .unsafeFile)
            #expect(error.reason.contains("owner-only"))
        }
    }

    @Test func aCredentialFileOwnedBySomeoneElseIsNotBelieved() throws {
        guard geteuid() == 0 else { return }  // only root can give a file away
        defer { removeDirectory() }
        let file = try credentialFile("user-7")
        #expect(chown(file.path, 65_534, 65_534) == 0)
        #expect(throws: CredentialStoreError.self) { try FileCredentialStore(namespace: .testing, directory: directory).load(identity: "user-7") }
    }

    @Test func aSymbolicLinkInPlaceOfACredentialFileIsNotFollowed() throws {
        defer { removeDirectory() }
        let file = try credentialFile("user-7")
        let elsewhere = directory.appendingPathComponent("elsewhere.json")
        #expect(rename(file.path, elsewhere.path) == 0)
        #expect(symlink(elsewhere.path, file.path) == 0)
        do {
            _ = try FileCredentialStore(namespace: .testing, directory: directory).load(identity: "user-7")
            Issue.record("a symbolic link was followed")
        } catch let error as CredentialStoreError {
            #expect(error.code == .unsafeFile)
            #expect(error.reason.contains("symbolic link"))
        }
    }

    @Test func aFIFOInPlaceOfACredentialFileIsRefusedWithoutBlocking() throws {
        defer { removeDirectory() }
        let file = try credentialFile("user-7")
        #expect(unlink(file.path) == 0)
        #expect(mkfifo(file.path, 0o600) == 0)
        do {
            _ = try FileCredentialStore(namespace: .testing, directory: directory).load(identity: "user-7")
            Issue.record("a FIFO was read as a credential")
        } catch let error as CredentialStoreError {
            #expect(error.code == .unsafeFile)
            #expect(error.reason.contains("not a regular file"))
        }
    }

    @Test func aHundredByteIdentityIsSavedLoadedAndRemoved() throws {
        defer { removeDirectory() }
        let store = FileCredentialStore(namespace: .testing, directory: directory)
        let identity = String(repeating: "é", count: 50)  // 100 UTF-8 bytes, 200 hexadecimal characters
        #expect(identity.utf8.count == 100)
        try store.save(credential, identity: identity)
        try store.save(credential, identity: identity)
        #expect(try store.load(identity: identity) == credential)
        try store.remove(identity: identity)
        #expect(try store.load(identity: identity) == nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }

    @Test func aDirectoryOwnedByAnotherUserIsRefused() throws {
        guard geteuid() == 0 else { return }  // only root can give a directory away
        defer { removeDirectory() }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try #require(chown(directory.path, 65_534, 65_534) == 0)
        #expect {
            try FileCredentialStore(namespace: .testing, directory: directory).save(credential, identity: "user-7")
        } throws: { error in
            (error as? CredentialStoreError)?.code == .unsafeDirectory
        }
    }

    @Test func aDirectoryWhoseParentOthersCanWriteIsRefusedUnlessTheParentIsSticky() throws {
        defer { removeDirectory() }
        let store = directory.appendingPathComponent("credentials", isDirectory: true)
        try FileManager.default.createDirectory(at: store, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try #require(chmod(directory.path, 0o777) == 0)
        #expect {
            try FileCredentialStore(namespace: .testing, directory: store).save(credential, identity: "user-7")
        } throws: { error in
            guard let error = error as? CredentialStoreError else { return false }
            return error.code == .unsafeDirectory && error.reason.contains("its parent") && error.reason.contains("another user could replace it")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.path).isEmpty)
        try #require(chmod(directory.path, 0o1777) == 0)
        try FileCredentialStore(namespace: .testing, directory: store).save(credential, identity: "user-7")
        #expect(try FileCredentialStore(namespace: .testing, directory: store).load(identity: "user-7") == credential)
    }

    @Test func canonicallyEquivalentIdentitiesAreTwoUsers() throws {
        defer { removeDirectory() }
        let store = FileCredentialStore(namespace: .testing, directory: directory)
        try store.save(StoredCredential(token: "token-of-nfc", expiresAt: nil), identity: "jos\u{E9}")
        #expect(try store.load(identity: "jose\u{301}") == nil)
        // The NFC user's file put in the NFD user's place is not the NFD user's credential.
        let nfc = directory.appendingPathComponent("credential-\(Credential.Identity.hexadecimal("jos\u{E9}")).json")
        let nfd = directory.appendingPathComponent("credential-\(Credential.Identity.hexadecimal("jose\u{301}")).json")
        try FileManager.default.copyItem(at: nfc, to: nfd)
        #expect(chmod(nfd.path, 0o600) == 0)
        #expect(throws: CredentialStoreError.unreadableCredential) { try store.load(identity: "jose\u{301}") }
        #expect(try store.load(identity: "jos\u{E9}")?.token == "token-of-nfc")
    }
}
