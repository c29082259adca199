import Foundation
import SDKAuthorizationTesting
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationModeKit
@testable import SDKAuthorizationEngagement
@testable import SDKAuthorizationIDToken
@testable import SDKAuthorizationSignature
@testable import SDKAuthorizationTokenExchange

/// A credential store whose `remove` fails, as a read-only or full disk would make it.
final class UnremovableCredentialStore: CredentialStore, Sendable {
    let inner = MemoryCredentialStore()
    var namespace: CredentialNamespace { inner.namespace }
    func load(identity: String) throws -> StoredCredential? { try inner.load(identity: identity) }
    func save(_ credential: StoredCredential, identity: String) throws { try inner.save(credential, identity: identity) }
    func remove(identity: String) throws { throw CredentialStoreError.fileSystemFailed("could not remove the stored credential (errno 30)") }
}

/// A credential store that calls `onSave` as each save begins.
final class SaveObservingCredentialStore: CredentialStore, Sendable {
    let inner = MemoryCredentialStore()
    let onSave = Locked<(@Sendable () -> Void)?>(nil)
    var namespace: CredentialNamespace { inner.namespace }
    func load(identity: String) throws -> StoredCredential? { try inner.load(identity: identity) }
    func save(_ credential: StoredCredential, identity: String) throws {
        onSave.withLock { $0 }?()
        try inner.save(credential, identity: identity)
    }
    func remove(identity: String) throws { try inner.remove(identity: identity) }
}

/// Every stored credential belongs to a user the app names; a switch or a logout at any moment wins.
@Suite("Stored credentials are bound to the user the app names", .hangLimit)
struct IdentityBoundStoreTests {
    let clock = ManualClock()
    let sink = RecordingDiagnosticsSink()
    let exchangeURL = URL(string: "https://platform.example.com/ccai/exchange")!
    let context = AuthorizationContext(endpoint: "chats", url: URL(string: "https://platform.example.com/ccai/chats")!)

    func signed(_ payload: SigningPayload) -> String {
        makeJWT(["iat": clock.now().timeIntervalSince1970, "exp": clock.now().timeIntervalSince1970 + 300], header: ["alg": "HS256", "typ": "JWT"])
    }

    /// A platform that answers every exchange with a numbered auth token living `lifetime` seconds.
    func platform(lifetime: Int = 600) -> RecordingTransport {
        let issued = Counter()
        return RecordingTransport { _ in
            ServerResponse(statusCode: 200, body: Data(#"{"auth_token":"auth-token-\#(issued.increment())","expires_in":\#(lifetime)}"#.utf8))
        }
    }

    func exchange(_ signer: PayloadSigner, identity: String?, store: (any CredentialStore)?, transport: RecordingTransport) throws -> TokenExchangeProvider {
        try TokenExchangeProvider(exchangeURL: exchangeURL, signer: signer, identity: identity, store: store, transport: transport, clock: clock, diagnostics: sink)
    }

    @Test func anExchangeStoreWithoutAnIdentityIsRefused() {
        #expect {
            try exchange(.async { _ in "" }, identity: nil, store: MemoryCredentialStore(), transport: platform())
        } throws: { error in
            (error as? ConfigurationError)?.message.contains("a credential store keeps one user's token: name the user (their ID) it belongs to; there is no shared default") == true
        }
    }

    @Test func anIDTokenStoreWithACredentialStoreButNoIdentityIsRefused() {
        #expect {
            try IDTokenStore(authorizedDomains: ["api.example.com"], diagnostics: sink, credentialStore: MemoryCredentialStore())
        } throws: { error in
            (error as? ConfigurationError)?.message.contains("credentialIdentity") == true
        }
    }

    @Test func switchingIdentityIsRefusedForAnEmptyOrOverlongIdentity() throws {
        let exchange = try exchange(.async { _ in "" }, identity: "user-a", store: MemoryCredentialStore(), transport: platform())
        for identity in ["", String(repeating: "x", count: 101)] {
            #expect(throws: ConfigurationError.self) { try exchange.switchIdentity(to: identity) }
        }
        #expect(exchange.identity == "user-a")
        let idTokens = try IDTokenStore(authorizedDomains: ["api.example.com"], diagnostics: sink)
        #expect(throws: ConfigurationError.self) { try idTokens.switchIdentity(to: "user-b") }  // no credential store
    }

    @Test func switchingIdentityNeverServesThePreviousUsersStoredToken() async throws {
        let store = MemoryCredentialStore()
        let signatures = Counter()
        let exchange = try exchange(.async { [self] payload in
            _ = signatures.increment()
            return signed(payload)
        }, identity: "user-a", store: store, transport: platform())
        #expect(try await exchange.credential(for: context) == .bearer("auth-token-1"))
        #expect(try store.load(identity: "user-a", kind: .exchangeAtPlatform)?.token == "auth-token-1")

        try exchange.switchIdentity(to: "user-b")
        #expect(exchange.currentToken == nil)
        #expect(try await exchange.credential(for: context) == .bearer("auth-token-2"), "user B signs and exchanges anew")
        #expect(try store.load(identity: "user-b", kind: .exchangeAtPlatform)?.token == "auth-token-2")
        #expect(try store.load(identity: "user-a", kind: .exchangeAtPlatform)?.token == "auth-token-1", "user A's token stays in A's slot")

        try exchange.switchIdentity(to: "user-a")
        #expect(try await exchange.credential(for: context) == .bearer("auth-token-1"), "user A's stored token serves A again")
        #expect(signatures.current == 2)
    }

    @Test func aSignAndExchangeOvertakenByASwitchIsStoredForNeitherUser() async throws {
        let store = MemoryCredentialStore()
        let gate = AsyncGate()
        let asked = Counter()
        let exchange = try exchange(.async { [self] payload in
            _ = asked.increment()
            await gate.wait()
            return signed(payload)
        }, identity: "user-a", store: store, transport: platform())
        let request = Task { [context] in try await exchange.credential(for: context) }
        await eventually("the signer was asked", { asked.current == 1 })
        try exchange.switchIdentity(to: "user-b")
        gate.open()
        await #expect(throws: RequestError.self) { try await request.value }
        for _ in 0..<1_000 { await Task.yield() }
        #expect(try store.load(identity: "user-a", kind: .exchangeAtPlatform) == nil)
        #expect(try store.load(identity: "user-b", kind: .exchangeAtPlatform) == nil)
        #expect(exchange.currentToken == nil)
    }

    @Test func theExchangedTokenIsStoredBeforeAnyRequestThatWaitedForItCanReturn() async throws {
        let store = SaveObservingCredentialStore()
        let exchange = try exchange(.async { [self] payload in signed(payload) }, identity: "user-a", store: store, transport: platform())
        // What a waiting request could hold while the save runs: the token, once it is delivered.
        let deliveredBeforeSaving = Locked<[String?]>([])
        store.onSave.withLock { $0 = { [weak exchange] in deliveredBeforeSaving.withLock { $0.append(exchange?.currentToken) } } }
        #expect(try await exchange.credential(for: context) == .bearer("auth-token-1"))
        #expect(deliveredBeforeSaving.withLock { $0 } == [nil], "stored first, then delivered: a relaunch right after the request finds the token")
        #expect(try store.load(identity: "user-a", kind: .exchangeAtPlatform)?.token == "auth-token-1")
    }

    @Test func anExchangeAnsweredAfterASwitchIsStoredInNeitherUsersSlot() async throws {
        let store = MemoryCredentialStore()
        let gate = AsyncGate()
        let reached = Counter(), answered = Counter()
        // A platform that answers late, ignoring the cancellation the switch sends.
        let transport = RecordingTransport { _ in
            _ = reached.increment()
            await gate.wait()
            defer { _ = answered.increment() }
            return ServerResponse(statusCode: 200, body: Data(#"{"auth_token":"token-of-a","expires_in":600}"#.utf8))
        }
        let exchange = try exchange(.async { [self] payload in signed(payload) }, identity: "user-a", store: store, transport: transport)
        let request = Task { [context] in try await exchange.credential(for: context) }
        await eventually("the exchange reached the platform", { reached.current == 1 })
        try exchange.switchIdentity(to: "user-b")
        await #expect(throws: RequestError.self) { try await request.value }
        gate.open()
        await eventually("the platform answered", { answered.current == 1 })
        for _ in 0..<1_000 { await Task.yield() }
        #expect(store.stored.withLock { $0.isEmpty }, "user A's token lands in no slot: not B's, the user now bound")
        #expect(exchange.currentToken == nil)
    }

    @Test func aLogoutWhoseStoredCopyCannotBeRemovedDoesNotBringTheTokenBack() async throws {
        let store = UnremovableCredentialStore()
        let exchange = try exchange(.async { [self] payload in signed(payload) }, identity: "user-a", store: store, transport: platform())
        #expect(try await exchange.credential(for: context) == .bearer("auth-token-1"))
        exchange.clearUserData()
        #expect(sink.messages(at: .warning).contains { $0.contains("could not be removed") })
        #expect(try await exchange.credential(for: context) == .bearer("auth-token-2"), "the logged-out token stays out of use")
    }

    @Test func aWallClockSetBackDoesNotKeepAnExchangedTokenPastItsLifetime() async throws {
        let exchange = try exchange(.async { [self] payload in signed(payload) }, identity: nil, store: nil, transport: platform(lifetime: 600))
        #expect(try await exchange.credential(for: context) == .bearer("auth-token-1"))
        // Ten minutes pass, and the wall clock is set back an hour meanwhile.
        clock.advance(by: 600)
        clock.setWallClock(to: clock.now().addingTimeInterval(-3_600))
        #expect(try await exchange.credential(for: context) == .bearer("auth-token-2"))
    }

    @Test func aStoredTokenIsTrustedForAtMostADayOnTheMonotonicClock() async throws {
        let store = MemoryCredentialStore()
        try store.save(StoredCredential(token: "stored-for-a-year", expiresAt: clock.now().addingTimeInterval(365 * 86_400)), identity: "user-a", kind: .exchangeAtPlatform)
        let exchange = try exchange(.async { [self] payload in signed(payload) }, identity: "user-a", store: store, transport: platform())
        #expect(try await exchange.credential(for: context) == .bearer("stored-for-a-year"))
        clock.advance(by: 86_400)
        #expect(try await exchange.credential(for: context) == .bearer("auth-token-1"))
    }

    @Test func idTokenStoreSwitchLoadsTheNewUsersTokenAndKeepsTheOldOnesStoredCopy() async throws {
        let store = MemoryCredentialStore()
        try store.save(StoredCredential(token: "token-of-b", expiresAt: nil), identity: "user-b", kind: .idTokenOfAPI)
        let idTokens = try IDTokenStore(authorizedDomains: ["api.example.com"], clock: clock, diagnostics: sink, credentialStore: store, credentialIdentity: "user-a")
        try idTokens.setIDToken("token-of-a")
        #expect(try store.load(identity: "user-a", kind: .idTokenOfAPI)?.token == "token-of-a")
        try idTokens.switchIdentity(to: "user-b")
        #expect(idTokens.currentToken == "token-of-b")
        try idTokens.setIDToken("new-token-of-b")
        #expect(try store.load(identity: "user-b", kind: .idTokenOfAPI)?.token == "new-token-of-b")
        #expect(try store.load(identity: "user-a", kind: .idTokenOfAPI)?.token == "token-of-a")
        try idTokens.switchIdentity(to: "user-c")
        #expect(idTokens.currentToken == nil, "user C has nothing stored, and B's token is not carried over")
    }

    // MARK: A change of user through the client (issue 36, item 1)

    /// An Engagement configuration choosing `providerName`, read with `registry`.
    func configuration(_ providerName: String, registry: ProviderRegistry, extra: String = "") throws -> AuthorizationConfiguration {
        try AuthorizationConfiguration(
            data: Data(#"{"projectToken": "project-1", "baseURL": "https://api.example.com", "authorization": "Token api-key-1", "advancedAuthEnabled": true, "providerName": "\#(providerName)"\#(extra)}"#.utf8),
            format: .json, registry: registry)
    }

    /// A platform whose exchange answers numbered auth tokens and whose API answers 200.
    func platformAndAPI() -> RecordingTransport {
        let issued = Counter()
        return RecordingTransport { request in
            guard request.url.path.hasSuffix("/exchange") else { return ServerResponse(statusCode: 200) }
            return ServerResponse(statusCode: 200, body: Data(#"{"auth_token":"auth-token-\#(issued.increment())","expires_in":600}"#.utf8))
        }
    }

    /// The exchange mode registered as the README shows (a store and alice's ID), behind a client.
    func exchangeClient(store: any CredentialStore, transport: RecordingTransport) throws -> AuthorizedHTTPClient {
        let registry = ProviderRegistry()
        registry.register(TokenExchangeMode(signer: .async { [self] payload in signed(payload) }, store: store, identity: "alice"))
        let configuration = try configuration("SDKAuthorization.TokenExchange", registry: registry,
                                              extra: #", "tokenExchangeURL": "https://platform.example.com/ccai/exchange""#)
        return try AuthorizedHTTPClient(configuration: configuration, registry: registry, transport: transport, diagnostics: sink, clock: clock)
    }

    /// The refresh-callback mode registered as the README shows, whose callback returns `id-token-<n>`.
    func idTokenClient(store: any CredentialStore, transport: RecordingTransport) throws -> AuthorizedHTTPClient {
        let registry = ProviderRegistry()
        let issued = Counter()
        registry.register(IDTokenRefreshMode(tokenRefresh: { "id-token-\(issued.increment())" }, credentialStore: store, credentialIdentity: "alice"))
        var policy = AuthorizationPolicy()
        try policy.add(Endpoint("ticketing", method: "GET", path: "/rover/ticketing"), scheme: .bearer)
        return try AuthorizedHTTPClient(configuration: configuration("SDKAuthorization.IDTokenRefresh", registry: registry), policy: policy,
                                        registry: registry, transport: transport, diagnostics: sink, clock: clock)
    }

    @Test func anExchangeModesIdentityChangeThatNamesNoUserStoresNoTokenInThePreviousUsersSlot() async throws {
        let store = MemoryCredentialStore()
        let client = try exchangeClient(store: store, transport: platform())
        _ = try await client.send(.appInboxFetch)
        #expect(try store.load(identity: "alice", kind: .exchangeAtPlatform)?.token == "auth-token-1")
        // Alice logs out and bob logs in; the app tells the client, as the README says.
        try await client.identityDidChange()
        await #expect(throws: RequestError.noUserNamed(endpoint: .appInboxFetch)) { try await client.send(.appInboxFetch) }
        #expect(store.stored.withLock { $0.isEmpty }, "nothing was exchanged or stored for a user nobody named: alice's slot holds no one else's token")
    }

    @Test func anIDTokenModesIdentityChangeThatNamesNoUserStoresNoTokenInThePreviousUsersSlot() async throws {
        let store = MemoryCredentialStore()
        let transport = RecordingTransport()
        let client = try idTokenClient(store: store, transport: transport)
        _ = try await client.send("ticketing")
        await eventually("alice's token is stored", { (try? store.load(identity: "alice", kind: .idTokenOfAPI))??.token == "id-token-1" })
        try await client.identityDidChange()
        await #expect(throws: RequestError.noUserNamed(endpoint: "ticketing")) { try await client.send("ticketing") }
        #expect(store.stored.withLock { $0.isEmpty }, "nothing was refreshed or stored for a user nobody named")
        #expect(transport.requests.count == 1)
    }

    @Test func aChangeOfUserNamingTheNewUserMovesTheExchangeModeToTheirSlotAndAlicesNextLaunchNeverSeesBobsToken() async throws {
        let store = MemoryCredentialStore()
        let transport = platformAndAPI()
        let client = try exchangeClient(store: store, transport: transport)
        _ = try await client.send(.appInboxFetch)
        try await client.identityDidChange(to: "bob")
        _ = try await client.send(.appInboxFetch)
        #expect(transport.requests.last?.value(forHeader: "Authorization") == "Bearer auth-token-2")
        #expect(try store.load(identity: "bob", kind: .exchangeAtPlatform)?.token == "auth-token-2", "bob's token is stored in bob's slot before his request returns")
        #expect(try store.load(identity: "alice", kind: .exchangeAtPlatform) == nil, "alice's logout removed her token, and bob's never lands in her slot")

        // Alice's next launch: the mode is registered for her again, and exchanges anew.
        let relaunch = try exchangeClient(store: store, transport: transport)
        _ = try await relaunch.send(.appInboxFetch)
        #expect(transport.requests.last?.value(forHeader: "Authorization") == "Bearer auth-token-3")
        // Bob again: his stored token serves him without an exchange.
        try await relaunch.identityDidChange(to: "bob")
        _ = try await relaunch.send(.appInboxFetch)
        #expect(transport.requests.last?.value(forHeader: "Authorization") == "Bearer auth-token-2")
    }

    @Test func aChangeOfUserNamingTheNewUserMovesTheIDTokenModeToTheirSlot() async throws {
        let store = MemoryCredentialStore()
        let transport = RecordingTransport()
        let client = try idTokenClient(store: store, transport: transport)
        _ = try await client.send("ticketing")
        try await client.identityDidChange(to: "bob")
        _ = try await client.send("ticketing")
        #expect(transport.requests.last?.value(forHeader: "Authorization") == "Bearer id-token-2")
        #expect(try store.load(identity: "bob", kind: .idTokenOfAPI)?.token == "id-token-2", "stored before bob's request returned")
        #expect(try store.load(identity: "alice", kind: .idTokenOfAPI) == nil)
        let idTokens = try #require(client.provider as? IDTokenStore)
        try await client.identityDidChange(to: nil)
        #expect(throws: ConfigurationError.self) { try idTokens.setIDToken("set-with-no-user-named") }
        #expect(try store.load(identity: "bob", kind: .idTokenOfAPI) == nil, "bob's logout removed his token")
    }

    @Test func anIdentityChangeRefusesAnIdentityNoSlotCanBeKeyedByAndChangesNothing() async throws {
        let store = MemoryCredentialStore()
        let transport = platformAndAPI()
        let client = try exchangeClient(store: store, transport: transport)
        _ = try await client.send(.appInboxFetch)
        for bad in ["", String(repeating: "x", count: 101), "bob\n"] {
            await #expect(throws: ConfigurationError.self) { try await client.identityDidChange(to: bad) }
        }
        _ = try await client.send(.appInboxFetch)
        #expect(transport.requests.last?.value(forHeader: "Authorization") == "Bearer auth-token-1", "alice is still the user")
    }

    @Test func aChangeOfUserMovesTheSignatureModesCurrentUserAndQueueLane() async throws {
        let authentication = try SignatureAuthentication(diagnostics: sink)
        try authentication.changeUser("alice", signature: makeJWT(["sub": "alice"]))
        try authentication.setSignature(makeJWT(["sub": "bob"]), for: "bob")
        var policy = AuthorizationPolicy()
        try policy.add(AuthorizationRule(host: "sdk.example.com", scheme: .signature))
        let client = AuthorizedHTTPClient(authorizer: try RequestAuthorizer(policy: policy, providers: [.signature: authentication]), transport: RecordingTransport())
        try await client.identityDidChange(to: "bob")
        #expect(authentication.currentUserId == "bob")
        try await client.identityDidChange(to: nil)
        #expect(authentication.currentUserId == nil)
    }

    @Test func aProviderDirectlyToldOfAnIdentityNoSlotCanBeKeyedByKeepsNoUser() async throws {
        let store = MemoryCredentialStore()
        let exchange = try exchange(.async { [self] payload in signed(payload) }, identity: "alice", store: store, transport: platform())
        await exchange.identityDidChange(to: String(repeating: "x", count: 101))
        #expect(exchange.identity == nil)
        await #expect(throws: RequestError.noUserNamed(endpoint: "chats")) { try await exchange.credential(for: context) }
        #expect(sink.messages(at: .warning).contains { $0.contains("keeps no user until one is named") })
    }
}
