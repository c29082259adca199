import Dispatch
import Foundation
import SDKAuthorizationTesting
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationModeKit
@testable import SDKAuthorizationIDToken

/// A keychain in memory: items by key, every call answered with an `OSStatus` as `SecItem*` would.
final class MemoryKeychain: KeychainItems, Sendable {
    struct Call: Sendable, Equatable {
        let name: String
        let status: Int32
    }

    private struct State {
        var items: [KeychainItemKey: Data] = [:]
        var calls: [Call] = []
        /// Updates still to hold until this many have arrived (a race of first saves).
        var updatesToGather = 0
        var gathered = 0
    }

    private let state = Locked(State())
    private let everyCall: Int32?
    private let gate = DispatchSemaphore(value: 0)

    /// A keychain that answers every call with `everyCall` when given (a missing entitlement, say).
    init(everyCall: Int32? = nil) {
        self.everyCall = everyCall
    }

    var calls: [Call] { state.withLock { $0.calls } }
    var items: [KeychainItemKey: Data] { state.withLock { $0.items } }

    /// Holds the next `count` updates until all of them have arrived: each sees the keychain as the
    /// others saw it.
    func gatherUpdates(_ count: Int) {
        state.withLock { $0.updatesToGather = count }
    }

    func plant(_ data: Data, at key: KeychainItemKey) {
        state.withLock { $0.items[key] = data }
    }

    func add(_ key: KeychainItemKey, data: Data) -> Int32 {
        state.withLock { state in
            let status = everyCall ?? (state.items[key] == nil ? KeychainStatus.success : KeychainStatus.duplicateItem)
            if status == KeychainStatus.success { state.items[key] = data }
            state.calls.append(Call(name: "add", status: status))
            return status
        }
    }

    func update(_ key: KeychainItemKey, data: Data) -> Int32 {
        let (status, releases) = state.withLock { state -> (Int32, Int) in
            let status = everyCall ?? (state.items[key] == nil ? KeychainStatus.itemNotFound : KeychainStatus.success)
            if status == KeychainStatus.success { state.items[key] = data }
            state.calls.append(Call(name: "update", status: status))
            guard state.updatesToGather > 0 else { return (status, -1) }
            state.gathered += 1
            guard state.gathered == state.updatesToGather else { return (status, 0) }
            state.updatesToGather = 0
            return (status, state.gathered - 1)
        }
        switch releases {
        case -1: break
        case 0: gate.wait()          // the last of the gathered updates lets this one go
        default: for _ in 0..<releases { gate.signal() }
        }
        return status
    }

    func copy(_ key: KeychainItemKey) -> (status: Int32, data: Data?) {
        state.withLock { state in
            let data = state.items[key]
            let status = everyCall ?? (data == nil ? KeychainStatus.itemNotFound : KeychainStatus.success)
            state.calls.append(Call(name: "copy", status: status))
            return (status, status == KeychainStatus.success ? data : nil)
        }
    }

    func delete(_ key: KeychainItemKey) -> Int32 {
        state.withLock { state in
            let status = everyCall ?? (state.items.removeValue(forKey: key) == nil ? KeychainStatus.itemNotFound : KeychainStatus.success)
            state.calls.append(Call(name: "delete", status: status))
            return status
        }
    }
}

@Suite("The Keychain store's logic, over an in-memory keychain", .hangLimit)
struct KeychainItemStoreTests {
    let keychain = MemoryKeychain()
    var store: KeychainItemStore { KeychainItemStore(namespace: .testing, service: "SDKAuthorization.credentials", accessGroup: nil, keychain: keychain) }

    @Test func aSavedCredentialIsReadBackAndRemoved() throws {
        let credential = StoredCredential(token: "token-7", expiresAt: Date(timeIntervalSince1970: 1_900_000_000))
        try store.save(credential, identity: "user-7")
        #expect(try store.load(identity: "user-7") == credential)
        try store.save(StoredCredential(token: "token-8", expiresAt: nil), identity: "user-7")
        #expect(try store.load(identity: "user-7")?.token == "token-8")
        try store.remove(identity: "user-7")
        #expect(try store.load(identity: "user-7") == nil)
        try store.remove(identity: "user-7")   // nothing stored: still succeeds
    }

    @Test func aCredentialTooLargeToReadBackIsRefusedAtSaveAndTheOneBeforeIsKept() throws {
        let credential = StoredCredential(token: "token-7", expiresAt: nil)
        try store.save(credential, identity: "user-7")
        let huge = StoredCredential(token: String(repeating: "a", count: 70_000), expiresAt: nil)
        #expect { try store.save(huge, identity: "user-7") } throws: { ($0 as? CredentialStoreError)?.code == .credentialTooLarge }
        #expect(try store.load(identity: "user-7") == credential, "nothing was written that the store could not read back")
        #expect(!String(describing: CredentialStoreError.credentialTooLarge(size: 70_100, limit: 65_536)).contains("aaaa"))
    }

    @Test func anItemOfExactlySixtyFourKiBIsSavedAndReadBackAndOneByteMoreIsRefused() throws {
        try checkCredentialSizeLimitAtItsEdge(save: { try store.save($0, identity: "user-7") }, load: { try store.load(identity: "user-7") })
    }

    @Test func aKeychainItemAnotherNamespaceWroteUnderTheSameServiceIsRefused() throws {
        let keychain = MemoryKeychain()
        let other = try CredentialNamespace("com.example.other-sdk")
        let theirs = KeychainItemStore(namespace: other, service: "shared.service", accessGroup: nil, keychain: keychain)
        let mine = KeychainItemStore(namespace: .testing, service: "shared.service", accessGroup: nil, keychain: keychain)
        try theirs.save(StoredCredential(token: "their-token", expiresAt: nil), identity: "user-7", kind: .idToken)
        #expect(throws: CredentialStoreError.foreignCredential(writtenBy: CredentialOwner(namespace: other, kind: .idToken),
                                                               expected: CredentialOwner(namespace: .testing, kind: .idToken))) {
            try mine.load(identity: "user-7", kind: .idToken)
        }
        #expect(try theirs.load(identity: "user-7", kind: .idToken)?.token == "their-token")
        #expect(try theirs.load(identity: "user-7", kind: .tokenExchange) == nil, "each kind has its own item")
        // By default each namespace has its own service.
        #expect(KeychainItemStore(namespace: other, accessGroup: nil, keychain: keychain).service == "SDKAuthorization.credentials.com.example.other-sdk")
        #expect(try KeychainItemStore(namespace: other, accessGroup: nil, keychain: keychain).load(identity: "user-7", kind: .idToken) == nil)
    }

    @Test func aKeychainItemAnotherNamespaceWroteUnderTheSameServiceIsNeitherOverwrittenNorRemoved() throws {
        let keychain = MemoryKeychain()
        let other = try CredentialNamespace("com.example.other-sdk")
        let theirs = KeychainItemStore(namespace: other, service: "shared.service", accessGroup: nil, keychain: keychain)
        let mine = KeychainItemStore(namespace: .testing, service: "shared.service", accessGroup: nil, keychain: keychain)
        try theirs.save(StoredCredential(token: "their-token", expiresAt: nil), identity: "user-7", kind: .idToken)
        #expect { try mine.save(StoredCredential(token: "my-token", expiresAt: nil), identity: "user-7", kind: .idToken) } throws: {
            ($0 as? CredentialStoreError)?.code == .foreignCredential
        }
        try mine.remove(identity: "user-7", kind: .idToken)
        #expect(try theirs.load(identity: "user-7", kind: .idToken)?.token == "their-token")
    }

    @Test func twoFirstSavesAtOnceBothSucceedAndTheLastWins() async throws {
        let store = store
        // Both saves look before either adds: both find no item and both add.
        keychain.gatherUpdates(2)
        let outcomes = await withTaskGroup(of: (String, Bool).self) { group in
            for token in ["token-a", "token-b"] {
                group.addTask {
                    await withCheckedContinuation { continuation in
                        DispatchQueue.global().async {
                            let saved = (try? store.save(StoredCredential(token: token, expiresAt: nil), identity: "user-7")) != nil
                            continuation.resume(returning: (token, saved))
                        }
                    }
                }
            }
            return await group.reduce(into: [String: Bool]()) { $0[$1.0] = $1.1 }
        }
        #expect(outcomes == ["token-a": true, "token-b": true])
        let calls = keychain.calls
        #expect(calls.filter { $0.name == "update" && $0.status == KeychainStatus.itemNotFound }.count == 2)
        #expect(calls.filter { $0.name == "add" }.map(\.status).sorted() == [KeychainStatus.duplicateItem, KeychainStatus.success])
        // The save that found the item added replaced it: its credential is the one kept.
        #expect(calls.last == MemoryKeychain.Call(name: "update", status: KeychainStatus.success))
        let stored = try #require(try store.load(identity: "user-7")).token
        #expect(["token-a", "token-b"].contains(stored))
        #expect(keychain.items.count == 1)
    }

    @Test func aReadOfAnotherIdentitysSlotReturnsNothing() throws {
        try store.save(StoredCredential(token: "token-of-a", expiresAt: nil), identity: "user-a")
        #expect(try store.load(identity: "user-b") == nil)
        // Canonically equivalent, not the same bytes: another user, another slot.
        try store.save(StoredCredential(token: "token-of-nfc", expiresAt: nil), identity: "jos\u{E9}")
        #expect(try store.load(identity: "jose\u{301}") == nil)
        try store.save(StoredCredential(token: "token-of-nfd", expiresAt: nil), identity: "jose\u{301}")
        #expect(try store.load(identity: "jos\u{E9}")?.token == "token-of-nfc")
        #expect(try store.load(identity: "jose\u{301}")?.token == "token-of-nfd")
    }

    @Test func storesOfAnotherServiceOrAccessGroupSeeNoneOfTheItems() throws {
        try store.save(StoredCredential(token: "token-7", expiresAt: nil), identity: "user-7")
        let otherService = KeychainItemStore(namespace: .testing, service: "Other.credentials", accessGroup: nil, keychain: keychain)
        let otherGroup = KeychainItemStore(namespace: .testing, service: "SDKAuthorization.credentials", accessGroup: "TEAM.shared", keychain: keychain)
        #expect(try otherService.load(identity: "user-7") == nil)
        #expect(try otherGroup.load(identity: "user-7") == nil)
        try otherService.remove(identity: "user-7")
        #expect(try store.load(identity: "user-7")?.token == "token-7")
    }

    @Test func anItemThatNamesAnotherIdentityIsNotRead() throws {
        // A keychain (or a hand) that matches accounts loosely puts the NFC user's item in the NFD slot.
        try store.save(StoredCredential(token: "token-of-nfc", expiresAt: nil), identity: "jos\u{E9}")
        let nfcItem = try #require(keychain.items.values.first)
        keychain.plant(nfcItem, at: KeychainItemKey(service: "SDKAuthorization.credentials", account: Credential.Identity.hexadecimal("jose\u{301}"), accessGroup: nil))
        #expect(throws: CredentialStoreError.unreadableCredential) { try store.load(identity: "jose\u{301}") }
    }

    @Test func anItemOverSixtyFourKibibytesIsNotRead() throws {
        // Planted beside the store (it never saves one that large itself).
        let key = KeychainItemKey(service: "SDKAuthorization.credentials", account: Credential.Identity.hexadecimal("user-7"), accessGroup: nil)
        // The item's own shape: {"identity": ..., "credential": {"token": ...}}, a byte over the limit.
        struct Item: Encodable { let identity: String; let credential: StoredCredential }
        var oversized = try JSONEncoder().encode(Item(identity: "user-7", credential: StoredCredential(token: String(repeating: "a", count: 65_500), expiresAt: nil)))
        oversized = try JSONEncoder().encode(Item(identity: "user-7", credential: StoredCredential(token: String(repeating: "a", count: 65_500 + 65_537 - oversized.count), expiresAt: nil)))
        #expect(oversized.count == 65_537)
        #expect(keychain.add(key, data: oversized) == KeychainStatus.success)
        #expect(throws: CredentialStoreError.unreadableCredential) { try store.load(identity: "user-7") }
        try store.save(StoredCredential(token: String(repeating: "a", count: 65_000), expiresAt: nil), identity: "user-7")
        #expect(try store.load(identity: "user-7")?.token.count == 65_000)
    }

    @Test func anInvalidIdentityReachesNoKeychainCall() {
        #expect(throws: CredentialStoreError.invalidIdentity) { try store.load(identity: "") }
        #expect(throws: CredentialStoreError.invalidIdentity) { try store.save(StoredCredential(token: "t", expiresAt: nil), identity: String(repeating: "x", count: 101)) }
        #expect(keychain.calls.isEmpty)
    }

    @Test func aMissingEntitlementSaysSoAndWhatToDoInstead() throws {
        let store = KeychainItemStore(namespace: .testing, service: "SDKAuthorization.credentials", accessGroup: nil, keychain: MemoryKeychain(everyCall: KeychainStatus.missingEntitlement))
        let expected = "Credential store: could not save the Keychain item (OSStatus -34018): this process has no Keychain entitlement (an unsigned command-line tool has none); sign it with a keychain-access-groups entitlement, or use FileCredentialStore"
        #expect(throws: CredentialStoreError(.keychainFailed, reason: String(expected.dropFirst("Credential store: ".count)))) {
            try store.save(StoredCredential(token: "secret-token", expiresAt: nil), identity: "user-7")
        }
        #expect(throws: CredentialStoreError.self) { try store.load(identity: "user-7") }
        #expect(throws: CredentialStoreError.self) { try store.remove(identity: "user-7") }
    }

    @Test func withoutTheEntitlementTheIDTokenIsKeptInMemoryAndTheLogSaysWhy() throws {
        let sink = RecordingDiagnosticsSink()
        let store = KeychainItemStore(namespace: .testing, service: "SDKAuthorization.credentials", accessGroup: nil, keychain: MemoryKeychain(everyCall: KeychainStatus.missingEntitlement))
        let idTokens = try IDTokenStore(authorizedDomains: ["api.example.com"], clock: ManualClock(), diagnostics: sink, credentialStore: store, credentialIdentity: "user-7")
        try idTokens.setIDToken("secret-id-token")
        #expect(idTokens.currentToken == "secret-id-token")
        let warnings = sink.messages(at: .warning)
        #expect(warnings.contains { $0.contains("OSStatus -34018): this process has no Keychain entitlement") }, "\(warnings)")
        #expect(!warnings.contains { $0.contains("secret-id-token") })
    }
}

@Suite("Identities compare as exact bytes", .hangLimit)
struct ExactBytesIdentityTests {
    @Test func canonicallyEquivalentStringsAreTwoKeys() {
        #expect("jos\u{E9}" == "jose\u{301}", "Swift's == follows canonical equivalence")
        #expect(ExactBytesKey("jos\u{E9}") != ExactBytesKey("jose\u{301}"))
        #expect(ExactBytesKey("jos\u{E9}") == ExactBytesKey("jos\u{E9}"))
        #expect(Set([ExactBytesKey("jos\u{E9}"), ExactBytesKey("jose\u{301}")]).count == 2)
        #expect(!Credential.Identity.same("jos\u{E9}", "jose\u{301}"))
    }

    @Test func anIDTokenStoreSwitchToACanonicallyEquivalentIdentityIsAnotherUser() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sdkauth-exact-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let idTokens = try IDTokenStore(authorizedDomains: ["api.example.com"], clock: ManualClock(), diagnostics: RecordingDiagnosticsSink(),
                                        credentialStore: FileCredentialStore(namespace: .testing, directory: directory), credentialIdentity: "jos\u{E9}")
        try idTokens.setIDToken("token-of-nfc")
        try idTokens.switchIdentity(to: "jose\u{301}")
        #expect(idTokens.currentToken == nil)
        try idTokens.switchIdentity(to: "jos\u{E9}")
        #expect(idTokens.currentToken == "token-of-nfc")
    }
}
