import Foundation
import SDKAuthorizationTesting
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationModeKit
@testable import SDKAuthorizationIDToken
@testable import SDKAuthorizationSignature
@testable import SDKAuthorizationTokenExchange

/// Every user of the framework in one process is a tenant: its stores, slots and queue files are
/// its own, and no credential or queued request crosses to another SDK or another mode.
@Suite("Tenants: namespaces and slot owners", .hangLimit)
struct CredentialNamespaceTests {
    let clock = ManualClock()
    let sink = RecordingDiagnosticsSink()
    let exchangeURL = URL(string: "https://platform.example.com/ccai/exchange")!
    /// One host both modes (and both SDKs) authorize: the worst case, where only the slots keep them apart.
    let context = AuthorizationContext(endpoint: "chats", url: URL(string: "https://platform.example.com/ccai/chats")!)
    let userID = "user-42"

    func temporaryDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("sdkauth-tenant-\(UUID().uuidString)", isDirectory: true)
    }

    /// An ID token (a JWT) that expires in an hour.
    func idToken(_ name: String) -> String {
        makeJWT(["sub": name, "exp": clock.now().timeIntervalSince1970 + 3_600])
    }

    func idTokenStore(_ store: any CredentialStore, diagnostics: RecordingDiagnosticsSink? = nil) throws -> IDTokenStore {
        try IDTokenStore(authorizedDomains: ["platform.example.com"], options: .init(refreshTimeout: 0, timeoutBehavior: .sendWithoutToken),
                         clock: clock, diagnostics: diagnostics ?? sink, credentialStore: store, credentialIdentity: userID)
    }

    /// A token-exchange provider whose platform answers `token-<n>` of `issuer`, counting signatures.
    func exchange(_ store: any CredentialStore, issuer: String, signatures: Counter, diagnostics: RecordingDiagnosticsSink? = nil,
                  at url: URL? = nil) throws -> TokenExchangeProvider {
        let issued = Counter()
        let clock = clock
        let transport = RecordingTransport { _ in
            ServerResponse(statusCode: 200, body: Data(#"{"auth_token":"exchanged-\#(issuer)-\#(issued.increment())","expires_in":600}"#.utf8))
        }
        return try TokenExchangeProvider(exchangeURL: url ?? exchangeURL, signer: .async { _ in
            _ = signatures.increment()
            return makeJWT(["iat": clock.now().timeIntervalSince1970, "exp": clock.now().timeIntervalSince1970 + 300], header: ["alg": "HS256", "typ": "JWT"])
        }, identity: userID, store: store, transport: transport, clock: clock, diagnostics: diagnostics ?? sink)
    }

    /// Waits until the exchange mode's save, which follows the delivery of its token, has landed.
    func exchangedTokenStored(_ token: String, in store: any CredentialStore, sourceLocation: SourceLocation = #_sourceLocation) async {
        await eventually("the exchanged token is stored", { (try? store.load(identity: userID, kind: .exchangeAtPlatform))??.token == token },
                         sourceLocation: sourceLocation)
    }

    // MARK: Names

    @Test(arguments: [
        "", "a", "sdk", "chatsdk", "com.", ".com", "com..example", "com.example.", "com/example", "../com.example",
        "com.example sdk", "com.ex\u{E4}mple", "com.example\u{0}", "com.example/..", "com.example:sdk", "~.example",
        "com." + String(repeating: "x", count: 97),
    ])
    func everyNamespaceThatIsNotReverseDNSIsRefusedNamingTheKey(name: String) {
        #expect {
            try CredentialNamespace(name)
        } throws: { error in
            guard let error = error as? ConfigurationError else { return false }
            return error.code == .invalidValue && error.key == "namespace" && error.message.contains("reverse-DNS")
        }
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(CredentialNamespace.self, from: JSONEncoder().encode(name)) }
    }

    /// Each naming rule broken alone, and the reason it is refused for.
    @Test(arguments: [
        // Only ASCII letters, digits, '-', '_' and '.': a '/' alone would put `com.a/b` inside tenant `com.a`'s directory.
        ("com.a/b", "may hold only ASCII letters"), ("com.example/sdk", "may hold only ASCII letters"),
        ("com.example\\sdk", "may hold only ASCII letters"), ("com.exa mple", "may hold only ASCII letters"),
        ("com.ex\u{E4}mple", "may hold only ASCII letters"), ("com.example\u{0}", "may hold only ASCII letters"),
        ("com.example:sdk", "may hold only ASCII letters"),
        // At least two labels, none empty.
        ("comexample", "at least two non-empty labels"), ("com..example", "at least two non-empty labels"),
        (".com.example", "at least two non-empty labels"), ("com.example.", "at least two non-empty labels"),
        // 3 to 100 bytes: 101 bytes, otherwise a good name.
        ("com." + String(repeating: "x", count: 97), "must be 3 to 100 bytes"),
    ])
    func aNamespaceBreakingOneRuleAloneIsRefusedForThatRule(name: String, reason: String) {
        #expect {
            try CredentialNamespace(name)
        } throws: { error in
            guard let error = error as? ConfigurationError else { return false }
            return error.code == .invalidValue && error.key == "namespace" && error.message.contains(reason)
        }
    }

    @Test func aNamespaceOfExactlyAHundredBytesOrThreeIsAccepted() throws {
        let longest = "com." + String(repeating: "x", count: 96)
        #expect(longest.utf8.count == 100)
        #expect(try CredentialNamespace(longest).name == longest)
        #expect(try CredentialNamespace("a.b").name == "a.b")
    }

    @Test func aBundleIdentifierIsANamespaceComparedAsExactBytes() throws {
        for name in ["com.example.chat-sdk", "io.rover.SDK", "a.b", "com.example.sdk_2", "com." + String(repeating: "x", count: 96)] {
            #expect(try CredentialNamespace(name).name == name)
        }
        #expect(try CredentialNamespace("com.Example.sdk") != CredentialNamespace("com.example.sdk"))
        let decoded = try JSONDecoder().decode(CredentialNamespace.self, from: Data(#""com.example.sdk""#.utf8))
        #expect(decoded == (try CredentialNamespace("com.example.sdk")))
    }

    @Test func aKindIsOneToTwentyFourLowercaseLettersDigitsAndDashes() {
        #expect(CredentialKind.idToken.rawValue == "idtoken")
        #expect(CredentialKind.tokenExchange.rawValue == "token-exchange")
        #expect(CredentialKind(rawValue: "my-kind-2")?.rawValue == "my-kind-2")
        // At the length's edges: 1 and 24 bytes in, 0 and 25 out (the other cases break one character rule each).
        #expect(CredentialKind(rawValue: "k")?.rawValue == "k")
        #expect(CredentialKind(rawValue: String(repeating: "k", count: 24))?.rawValue == String(repeating: "k", count: 24))
        for bad in ["", "IDToken", "id token", "id_token", "id:token", "../x", String(repeating: "k", count: 25)] {
            #expect(CredentialKind(rawValue: bad) == nil, "\(bad)")
        }
    }

    // MARK: Two modes of one SDK, one user, one store

    @Test func theExchangeModeNeverSendsTheIDTokenAndTheIDTokenModeNeverTheExchangedToken() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = FileCredentialStore(namespace: .testing, directory: directory)
        let signatures = Counter()

        // The ID-token mode stores its token first: the exchange mode's cold start must not take it.
        let idTokens = try idTokenStore(store)
        try idTokens.setIDToken(idToken("id-token-1"))
        let exchange = try exchange(store, issuer: "sdk", signatures: signatures)
        #expect(try await exchange.credential(for: context) == .bearer("exchanged-sdk-1"))
        await exchangedTokenStored("exchanged-sdk-1", in: store)
        #expect(signatures.current == 1, "the exchange happened")

        // The exchange mode has stored its token too: the ID-token mode's cold start must not take it.
        let coldIDTokens = try idTokenStore(FileCredentialStore(namespace: .testing, directory: directory))
        #expect(try await coldIDTokens.credential(for: context) == .bearer(idToken("id-token-1")))
        let coldExchange = try self.exchange(FileCredentialStore(namespace: .testing, directory: directory), issuer: "sdk", signatures: signatures)
        #expect(try await coldExchange.credential(for: context) == .bearer("exchanged-sdk-1"))
        #expect(signatures.current == 1, "the stored exchanged token served the cold start")

        // Logging out of one mode leaves the other's token.
        coldIDTokens.clearIDToken()
        #expect(try store.load(identity: userID, kind: .idTokenOfPlatform) == nil)
        #expect(try store.load(identity: userID, kind: .exchangeAtPlatform)?.token == "exchanged-sdk-1")
        coldExchange.clearUserData()
        #expect(try store.load(identity: userID, kind: .exchangeAtPlatform) == nil)
    }

    @Test func aStoreOfYourOwnWithOneSlotPerIdentityStillNeverServesTheOtherMode() async throws {
        // MemoryCredentialStore implements the identity calls only: the kinds share its one slot.
        let store = MemoryCredentialStore()
        let signatures = Counter()
        let idTokens = try idTokenStore(store)
        try idTokens.setIDToken(idToken("id-token-1"))
        let exchange = try exchange(store, issuer: "sdk", signatures: signatures, diagnostics: sink)
        #expect(try await exchange.credential(for: context) == .bearer("exchanged-sdk-1"))
        await exchangedTokenStored("exchanged-sdk-1", in: store)
        #expect(signatures.current == 1)
        #expect(sink.messages(at: .warning).contains { $0.contains("written by idtoken for 'platform.example.com' of com.example.tests, not token-exchange for 'https://platform.example.com/ccai/exchange' of com.example.tests") })
        let coldIDTokens = try idTokenStore(store)
        #expect(coldIDTokens.currentToken == nil, "the slot holds the exchanged token now, which is not the ID token mode's")
        #expect(try await coldIDTokens.credential(for: context) == .omitted)
        // A logout of the ID-token mode does not remove the exchange mode's token.
        coldIDTokens.clearIDToken()
        #expect(try store.load(identity: userID, kind: .exchangeAtPlatform)?.token == "exchanged-sdk-1")
    }

    // MARK: Two providers of one mode, one SDK, one user, one store (issue 36, item 2)

    @Test func twoExchangeProvidersForTwoExchangeURLsWithOneStoreAndOneUserNeverLoadEachOthersToken() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = FileCredentialStore(namespace: .testing, directory: directory)
        let us = URL(string: "https://us.platform.example.com/ccai/exchange")!, eu = URL(string: "https://eu.platform.example.com/ccai/exchange")!
        let signatures = Counter()
        let usExchange = try exchange(store, issuer: "us", signatures: signatures, at: us)
        #expect(try await usExchange.credential(for: context) == .bearer("exchanged-us-1"))
        // The second region's provider, given the SDK's one store and the same user: it exchanges its own.
        let euExchange = try exchange(store, issuer: "eu", signatures: signatures, at: eu)
        #expect(euExchange.credentialKind != usExchange.credentialKind)
        #expect(try await euExchange.credential(for: context) == .bearer("exchanged-eu-1"), "the EU request never carries the US token")
        #expect(signatures.current == 2)
        // Next launch: each region gets back its own token, and only its own.
        let coldUS = try exchange(FileCredentialStore(namespace: .testing, directory: directory), issuer: "us-again", signatures: signatures, at: us)
        let coldEU = try exchange(FileCredentialStore(namespace: .testing, directory: directory), issuer: "eu-again", signatures: signatures, at: eu)
        #expect(try await coldUS.credential(for: context) == .bearer("exchanged-us-1"))
        #expect(try await coldEU.credential(for: context) == .bearer("exchanged-eu-1"))
        #expect(signatures.current == 2)
        // One region's logout leaves the other's token.
        coldEU.clearUserData()
        #expect(try store.load(identity: userID, kind: usExchange.credentialKind)?.token == "exchanged-us-1")
    }

    @Test func twoIDTokenStoresForStagingAndProductionWithOneStoreAndOneUserNeverLoadEachOthersToken() async throws {
        let store = MemoryCredentialStore()
        func idTokens(_ domain: String) throws -> IDTokenStore {
            try IDTokenStore(authorizedDomains: [domain], options: .init(refreshTimeout: 0, timeoutBehavior: .sendWithoutToken),
                             clock: clock, diagnostics: sink, credentialStore: store, credentialIdentity: userID)
        }
        let staging = try idTokens("staging.example.com")
        try staging.setIDToken(idToken("staging-token"))
        let production = try idTokens("api.example.com")
        #expect(production.currentToken == nil, "production never loads the staging token")
        #expect(sink.messages(at: .warning).contains { $0.contains("written by idtoken for 'staging.example.com'") && !$0.contains("staging-token") })
        #expect(try idTokens("staging.example.com").currentToken == idToken("staging-token"))
    }

    @Test func aSlotWrittenByOneProviderInstanceIsRefusedToAnotherEvenUnderItsName() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = FileCredentialStore(namespace: .testing, directory: directory)
        let us = CredentialKind.tokenExchange.scoped(to: "https://us.example.com/exchange")
        let eu = CredentialKind.tokenExchange.scoped(to: "https://eu.example.com/exchange")
        #expect(us != eu && us.slotName != eu.slotName && us.slotName.hasPrefix("token-exchange."))
        try store.save(StoredCredential(token: "us-token", expiresAt: nil), identity: userID, kind: us)
        #expect(try store.load(identity: userID, kind: eu) == nil, "another instance's slot is another file")
        #expect(try store.load(identity: userID, kind: .tokenExchange) == nil, "the kind's own slot is another file")
        // The US file copied under the EU slot's name (or two instances whose digests meet): the owner says who wrote it.
        let hex = Credential.Identity.hexadecimal(userID)
        try FileManager.default.copyItem(at: directory.appendingPathComponent("credential-\(us.slotName)-\(hex).json"),
                                         to: directory.appendingPathComponent("credential-\(eu.slotName)-\(hex).json"))
        #expect(throws: CredentialStoreError.foreignCredential(writtenBy: CredentialOwner(namespace: .testing, kind: us),
                                                               expected: CredentialOwner(namespace: .testing, kind: eu))) {
            try store.load(identity: userID, kind: eu)
        }
        // A store of your own with one slot per identity refuses it the same way.
        let single = MemoryCredentialStore()
        try single.save(StoredCredential(token: "us-token", expiresAt: nil), identity: userID, kind: us)
        #expect(throws: CredentialStoreError.self) { try single.load(identity: userID, kind: eu) }
        #expect(try single.load(identity: userID, kind: us)?.token == "us-token")
    }

    @Test func aKindWithAnInstanceIsKeptWholeInTheRecordAndReadBackAsItWasWritten() throws {
        let kind = CredentialKind.idToken.scoped(to: "staging.example.com")
        let decoded = try JSONDecoder().decode(CredentialKind.self, from: JSONEncoder().encode(kind))
        #expect(decoded == kind && decoded.instance == "staging.example.com")
        #expect(try JSONDecoder().decode(CredentialKind.self, from: Data(#""idtoken""#.utf8)) == .idToken)
        #expect(CredentialKind.idToken.scoped(to: "jos\u{E9}") != CredentialKind.idToken.scoped(to: "jose\u{301}"), "instances compare as exact bytes")
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(CredentialKind.self, from: Data(#"{"name":"ID Token","instance":"x"}"#.utf8)) }
    }

    // MARK: Owners

    @Test func aCredentialAnotherNamespaceWroteIsRefusedAndNeverSent() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let other = try CredentialNamespace("com.example.other-sdk")
        let mine = FileCredentialStore(namespace: .testing, directory: directory)
        let theirs = FileCredentialStore(namespace: other, directory: directory)   // misconfigured: one directory for two SDKs
        try theirs.save(StoredCredential(token: "their-secret-token", expiresAt: clock.now().addingTimeInterval(600)), identity: userID, kind: .exchangeAtPlatform)
        let expected = CredentialStoreError.foreignCredential(
            writtenBy: CredentialOwner(namespace: other, kind: .exchangeAtPlatform), expected: CredentialOwner(namespace: .testing, kind: .exchangeAtPlatform))
        #expect(throws: expected) { try mine.load(identity: userID, kind: .exchangeAtPlatform) }
        #expect(expected.code == .foreignCredential)
        #expect(expected.message.contains("com.example.other-sdk") && !expected.message.contains("their-secret-token"))

        let signatures = Counter()
        let exchange = try exchange(mine, issuer: "mine", signatures: signatures)
        #expect(try await exchange.credential(for: context) == .bearer("exchanged-mine-1"))
        #expect(signatures.current == 1)
        #expect(sink.messages(at: .warning).contains { $0.contains("The stored auth token could not be read") && $0.contains("com.example.other-sdk") })
        #expect(!sink.messages(at: .warning).joined().contains("their-secret-token"))
    }

    @Test func aFileAnotherKindWroteIsRefusedEvenUnderThisKindsName() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = FileCredentialStore(namespace: .testing, directory: directory)
        try store.save(StoredCredential(token: "an-id-token", expiresAt: nil), identity: userID, kind: .idTokenOfPlatform)
        let hex = Credential.Identity.hexadecimal(userID)
        try FileManager.default.copyItem(at: directory.appendingPathComponent("credential-\(CredentialKind.idTokenOfPlatform.slotName)-\(hex).json"),
                                         to: directory.appendingPathComponent("credential-\(CredentialKind.exchangeAtPlatform.slotName)-\(hex).json"))
        #expect(throws: CredentialStoreError.foreignCredential(writtenBy: CredentialOwner(namespace: .testing, kind: .idTokenOfPlatform),
                                                               expected: CredentialOwner(namespace: .testing, kind: .exchangeAtPlatform))) {
            try store.load(identity: userID, kind: .exchangeAtPlatform)
        }
        #expect(try store.load(identity: userID, kind: .idTokenOfPlatform)?.owner == CredentialOwner(namespace: .testing, kind: .idTokenOfPlatform))
    }

    // MARK: Credentials without an owner

    @Test func aCredentialSavedWithoutAnOwnerIsNeverServedToAProviderAndIsReplaced() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = FileCredentialStore(namespace: .testing, directory: directory)
        // The slot without a kind, as files were named before owners: still readable by the app, never by a mode.
        try store.save(StoredCredential(token: idToken("old-token"), expiresAt: clock.now().addingTimeInterval(600)), identity: userID)
        #expect(try store.load(identity: userID)?.token == idToken("old-token"))
        // The same credential, without an owner, under a kind's own name (a file copied by hand).
        let hex = Credential.Identity.hexadecimal(userID)
        try FileManager.default.copyItem(at: directory.appendingPathComponent("credential-\(hex).json"),
                                         to: directory.appendingPathComponent("credential-\(CredentialKind.exchangeAtPlatform.slotName)-\(hex).json"))
        #expect(throws: CredentialStoreError.foreignCredential(writtenBy: nil, expected: CredentialOwner(namespace: .testing, kind: .exchangeAtPlatform))) {
            try store.load(identity: userID, kind: .exchangeAtPlatform)
        }

        let idTokens = try idTokenStore(store)
        #expect(idTokens.currentToken == nil)
        let signatures = Counter()
        let exchange = try exchange(store, issuer: "new", signatures: signatures)
        #expect(try await exchange.credential(for: context) == .bearer("exchanged-new-1"))
        await exchangedTokenStored("exchanged-new-1", in: store)
        #expect(signatures.current == 1)
        #expect(sink.messages(at: .warning).contains { $0.contains("no recorded owner") })
        #expect(try store.load(identity: userID, kind: .exchangeAtPlatform)?.token == "exchanged-new-1", "the new token replaced it")
    }

    // MARK: Two SDKs in one process

    @Test func twoSDKsInOneProcessWithTheDefaultsAndOneUserIDShareNoCredentialAndNoQueuedRequest() async throws {
        // Unique names, so the real default directories of this run are the tests' own.
        let run = UUID().uuidString.lowercased()
        let namespaces = [try CredentialNamespace("com.example.chat-sdk.\(run)"), try CredentialNamespace("com.example.analytics-sdk.\(run)")]
        defer {
            for namespace in namespaces {
                try? FileManager.default.removeItem(at: FileCredentialStore.defaultDirectory(for: namespace))
                try? FileManager.default.removeItem(at: SignatureRequestQueue.defaultDirectory(for: namespace))
            }
        }
        #expect(FileCredentialStore(namespace: namespaces[0]).directory != FileCredentialStore(namespace: namespaces[1]).directory)

        // First launch: each SDK's two modes, each with the defaults it would write and the same user ID.
        let signatures = [Counter(), Counter()]
        for (sdk, namespace) in namespaces.enumerated() {
            let idTokens = try idTokenStore(FileCredentialStore(namespace: namespace))
            try idTokens.setIDToken(idToken("id-token-of-sdk-\(sdk)"))
            let exchange = try exchange(FileCredentialStore(namespace: namespace), issuer: "sdk-\(sdk)", signatures: signatures[sdk])
            #expect(try await exchange.credential(for: context) == .bearer("exchanged-sdk-\(sdk)-1"))
            await exchangedTokenStored("exchanged-sdk-\(sdk)-1", in: FileCredentialStore(namespace: namespace))
        }
        #expect(signatures.map(\.current) == [1, 1])

        // Next launch: every mode of every SDK gets back its own token, and only its own.
        for (sdk, namespace) in namespaces.enumerated() {
            let idTokens = try idTokenStore(FileCredentialStore(namespace: namespace))
            #expect(try await idTokens.credential(for: context) == .bearer(idToken("id-token-of-sdk-\(sdk)")))
            let exchange = try exchange(FileCredentialStore(namespace: namespace), issuer: "sdk-\(sdk)-again", signatures: signatures[sdk])
            #expect(try await exchange.credential(for: context) == .bearer("exchanged-sdk-\(sdk)-1"))
        }
        #expect(signatures.map(\.current) == [1, 1], "no SDK signed again: each found its own token")

        // One SDK's logout leaves the other's tokens.
        try idTokenStore(FileCredentialStore(namespace: namespaces[0])).clearIDToken()
        #expect(try idTokenStore(FileCredentialStore(namespace: namespaces[1])).currentToken == idToken("id-token-of-sdk-1"))

        // Signature mode: both queues under their default name and default directory, open at once.
        let offline = try QueueSDK(responder: { _ in ServerResponse(statusCode: 503) }, directory: SignatureRequestQueue.defaultDirectory(for: namespaces[0]))
        let online = try QueueSDK(responder: { _ in ServerResponse(statusCode: 201) }, directory: SignatureRequestQueue.defaultDirectory(for: namespaces[1]))
        let waiting = try offline.queue()
        let queued = try await waiting.enqueue(offline.request("sdk-0"))
        _ = await waiting.waitUntilIdle()
        let sending = try online.queue()
        #expect(sending.recovery.recoveredCount == 0)
        _ = try await sending.enqueue(online.request("sdk-1"))
        #expect(await sending.flush() == 0)
        #expect(online.transport.requests.map { String(decoding: $0.body ?? Data(), as: UTF8.self) } == [#"{"from":"sdk-1"}"#])
        #expect(waiting.count == 1, "the other SDK's request waits in its own queue")
        await sending.close()
        await waiting.close()
        let reopened = try offline.queue()
        #expect(reopened.recovery.recoveredCount == 1)
        #expect(reopened.recovery.inDoubt.allSatisfy { $0 == queued })
        await reopened.close()
    }
}

/// The "Two SDKs in one app" article's example (the core's DocC catalogue), verbatim, so it keeps compiling.
enum TwoSDKsREADME {
    static func makeChatSDKModes(userID: String, exchangeURL: URL, signer: PayloadSigner) throws -> (IDTokenStore, TokenExchangeProvider) {
        let namespace = try CredentialNamespace("com.example.chat-sdk")          // your SDK's bundle identifier
        let store = PlatformCredentialStore(namespace: namespace)                 // its own Keychain service or directory
        let idTokens = try IDTokenStore(authorizedDomains: ["chat.example.com"], credentialStore: store, credentialIdentity: userID)
        let exchange = try TokenExchangeProvider(exchangeURL: exchangeURL, signer: signer, identity: userID, store: store)
        return (idTokens, exchange)
    }
}

@Suite("Two SDKs in one app: the article's example", .hangLimit)
struct TwoSDKsREADMETests {
    @Test func theTwoSDKsExampleInTheREADMEIsTheCodeCompiledHere() throws {
        #expect(try readmeBlocksMatchCompiledCopy(heading: "## Overview", in: "Sources/SDKAuthorization/SDKAuthorization.docc/TwoSDKsInOneApp.md", source: #filePath) == 1)
    }
}

/// No process-global mutable state in the framework: what one tenant changes, another never sees.
@Suite("No process-global mutable state", .hangLimit)
struct NoGlobalMutableStateTests {
    /// The lines of a Swift file that declare mutable state shared by the whole process: a stored
    /// `static var` (a `@TaskLocal` one is per task), `nonisolated(unsafe)`, a top-level `var`.
    static func globalMutableState(in text: String) -> [String] {
        text.split(separator: "\n").map(String.init).filter { line in
            let code = line.trimmingCharacters(in: .whitespaces)
            if code.hasPrefix("//") { return false }
            if code.contains("nonisolated(unsafe)") || line.hasPrefix("var ") { return true }
            guard let range = code.range(of: "static var "), !code.contains("@TaskLocal") else { return false }
            let rest = code[range.upperBound...]
            guard let brace = rest.firstIndex(of: "{") else { return true }
            return rest[..<brace].contains("=")
        }
    }

    @Test func aStoredStaticVarAnUnsafeGlobalOrATopLevelVarIsFound() {
        let text = """
        enum Shared { static var cache: [String: String] = [:] }
        enum Computed { static var now: Date { Date() } }
        nonisolated(unsafe) let counter = Counter()
        var registry = [String]()
        @TaskLocal static var pinned: Int?
        // static var commented = 1
        """
        #expect(Self.globalMutableState(in: text) == [
            "enum Shared { static var cache: [String: String] = [:] }", "nonisolated(unsafe) let counter = Counter()", "var registry = [String]()",
        ])
    }

    @Test func theFrameworksSourcesHoldNoProcessGlobalMutableState() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../../Sources").standardized
        let files = try #require(FileManager.default.enumerator(atPath: root.path)).compactMap { $0 as? String }
            .filter { $0.hasSuffix(".swift") && !$0.hasSuffix("main.swift") }
        #expect(files.count > 50)
        for file in files {
            let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
            #expect(Self.globalMutableState(in: text).isEmpty, "\(file)")
        }
    }
}

/// One SDK's signature mode: its own user (the same user ID as the other SDK's), transport and queue
/// under the default queue name.
struct QueueSDK {
    let directory: URL
    let authentication: SignatureAuthentication
    let transport: RecordingTransport
    let client: AuthorizedHTTPClient

    init(responder: @escaping RecordingTransport.Responder, directory: URL) throws {
        self.directory = directory
        authentication = try SignatureAuthentication(diagnostics: RecordingDiagnosticsSink())
        try authentication.changeUser("user-42", signature: signature("user-42"))
        transport = RecordingTransport(responder: responder)
        client = try signatureClient(authentication, transport: transport)
    }

    func queue() throws -> SignatureRequestQueue {
        try SignatureRequestQueue(directory: directory, authentication: authentication, client: client, clock: ManualClock(), diagnostics: RecordingDiagnosticsSink())
    }

    func request(_ from: String) -> OutgoingRequest {
        OutgoingRequest(method: "POST", url: dataURL, headers: ["Content-Type": "application/json"], body: Data(#"{"from":"\#(from)"}"#.utf8))
    }
}
