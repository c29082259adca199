import Dispatch
import Foundation
import SDKAuthorization
import SDKAuthorizationModeKit

/// The async refresh-callback mode (Rover style): the app sets and clears an ID token, and
/// registers a callback the framework invokes when a request needs a token and has none fresh.
///
/// Requests that match ``authorizedDomains`` carry `Authorization: Bearer <ID token>`; other
/// requests never see it. A domain names a scheme, a host pattern and a port
/// (`AuthorizedDomain`): `*.rover.io` matches `https://` subdomains of `rover.io` on port 443
/// only, never `http://api.rover.io` or `https://api.rover.io:8443`. A token is stale when its JWT `exp` is less than
/// ``Options/staleLeeway`` (60 s) away; a token whose `exp` cannot be read is kept. When the
/// device's clock disagrees with a token as it is set or refreshed (it arrives already stale, or
/// issued more than a minute in the future by its `iat`), its lifetime, `exp - iat`, is counted on
/// the monotonic clock from its arrival instead: a device clock minutes fast never makes every
/// token stale on arrival (a refresh for every request); at worst a token is used until the server
/// refuses it. A request
/// that needs a token and finds none fresh waits up to ``Options/refreshTimeout`` (10 s) for
/// ``setIDToken(_:)``:
///
/// - Any number of concurrent waiters share **one** callback invocation, and all resume with the
///   token that is set, in the order they began waiting.
/// - A token set before the wait began satisfies it only if it is fresh.
/// - Cancelling one waiting request releases that one only.
/// - ``clearIDToken()`` (logout) during a wait fails the waiters with
///   `RequestError/Code/credentialCleared`. A request sent before it and rejected after it fails as
///   cleared too, without a refresh or a second send, even when the app wraps the store in a
///   decorator of its own: the store notes on each request the generation its token came from.
/// - A refresh callback that returns the token (``registerTokenRefresh(_:)``) and
///   throws ends every wait at once with `RequestError/Code/refreshFailed`, carrying its error.
/// - On timeout the store logs ``timeoutMessage(after:)`` at warning level and, by default, sends the
///   request without the token, as Rover does; ``Options/TimeoutBehavior/fail`` fails it with
///   `RequestError/Code/credentialTimedOut` instead.
/// - Waits run on the clock's monotonic time: setting the system clock back does not stretch them.
///   Only the token's `exp` is compared with wall-clock time, and only while the device's clock
///   agreed with the token as it arrived.
/// - A 401 from an authorized host marks the token stale; the client then retries that request
///   once, after a refresh.
///
/// ```swift
/// let idTokens = try IDTokenStore(authorizedDomains: ["*.rover.io"])
/// idTokens.registerTokenRefresh {
///     try await session.refreshIDToken()      // a thrown error fails the waiting requests at once
/// }
/// let client = try AuthorizedHTTPClient(configuration: configuration, provider: idTokens)
/// ```
public final class IDTokenStore: AuthorizationProvider, Sendable, CustomStringConvertible, CustomReflectable {
    /// How the store waits and what a timeout does.
    public struct Options: Sendable, Equatable {
        /// What happens to a request whose wait for a token runs out.
        public enum TimeoutBehavior: Sendable, Equatable {
            /// Send the request without a token (Rover's behaviour).
            case sendWithoutToken
            /// Fail the request with `RequestError/Code/credentialTimedOut`.
            case fail
        }

        /// How long a request waits for ``IDTokenStore/setIDToken(_:)``, in seconds (default 10).
        public var refreshTimeout: TimeInterval
        /// A token whose `exp` is less than this many seconds away is stale (default 60).
        public var staleLeeway: TimeInterval
        /// What a timeout does (default ``TimeoutBehavior/sendWithoutToken``).
        public var timeoutBehavior: TimeoutBehavior

        /// Creates options.
        public init(refreshTimeout: TimeInterval = 10, staleLeeway: TimeInterval = 60, timeoutBehavior: TimeoutBehavior = .sendWithoutToken) {
            self.refreshTimeout = refreshTimeout
            self.staleLeeway = staleLeeway
            self.timeoutBehavior = timeoutBehavior
        }
    }

    private enum Callback {
        case async(@Sendable () async -> Void)
        case sync(@Sendable () -> Void)
        case returningToken(@Sendable () async throws -> String)
    }

    /// The token and its `exp` (when readable).
    ///
    /// Its staleness is judged as `RefreshingTokenProvider` judges its tokens: `exp` on the wall
    /// clock while the device's clock agrees with the token as it arrives (no earlier than its
    /// `iat` less a minute, and `exp` at least the leeway away); otherwise (the device clock is
    /// off, so the token arrives stale or from the future) its lifetime, `exp - iat`, counted on the
    /// monotonic clock from its arrival: a fast device clock causes no refresh storm, and at worst
    /// the token is used until the server refuses it. A token loaded from the credential store did
    /// not just arrive: it is judged on the wall clock.
    struct IDToken: Sendable {
        /// How far the device clock may be behind a token's `iat` and still agree with it.
        static let clockTolerance: TimeInterval = 60

        let token: String
        let expiresAt: Date?
        /// When the device clock disagreed with the token as it arrived: the monotonic time its lifetime ends.
        let lifetimeEndsAt: TimeInterval?

        init(_ token: String, arrivedOn clock: (any AuthorizationClock)? = nil, leeway: TimeInterval = 0) {
            let claims = try? JWTClaims(decoding: token)
            self.token = token
            self.expiresAt = claims?.expiresAt
            if let clock, let expiresAt = claims?.expiresAt, let issuedAt = claims?.issuedAt,
               clock.now().timeIntervalSince(issuedAt) < -Self.clockTolerance || expiresAt.timeIntervalSince(clock.now()) < leeway {
                lifetimeEndsAt = clock.monotonicNow() + expiresAt.timeIntervalSince(issuedAt)
            } else {
                lifetimeEndsAt = nil
            }
        }

        /// Seconds until it expires on `clock` (negative once it has); `nil` without a readable `exp`.
        func remaining(on clock: any AuthorizationClock) -> TimeInterval? {
            if let lifetimeEndsAt { return lifetimeEndsAt - clock.monotonicNow() }
            return expiresAt?.timeIntervalSince(clock.now())
        }

        /// Its expiry (if readable) at least `leeway` away.
        func isFresh(on clock: any AuthorizationClock, leeway: TimeInterval) -> Bool {
            if let remaining = remaining(on: clock), remaining < leeway { return false }
            return true
        }
    }

    /// The schemes, hosts and ports that may receive the token.
    public let authorizedDomains: [AuthorizedDomain]
    /// The waiting and timeout options.
    public let options: Options
    /// The credential store slot of this store's token: `CredentialKind/idToken` scoped to its
    /// ``authorizedDomains`` (in order), so two ID token stores for two backends (staging and
    /// production) with one credential store and one user never load each other's token: each is
    /// refused the other's (`CredentialStoreError/Code/foreignCredential`).
    public let credentialKind: CredentialKind

    private let clock: any AuthorizationClock
    private let diagnostics: any DiagnosticsSink
    /// Told when refreshes and waits start and end.
    private let observer: (any AuthorizationEventObserver)?
    private let credentialStore: (any CredentialStore)?
    /// The user whose token the credential store keeps. Changed with the generation of ``refresh``,
    /// under its lock, so a save of an earlier generation never lands in another user's slot.
    private let identity: Locked<String?>
    private let callback = Locked<Callback?>(nil)
    /// The token, the one refresh that runs, and the requests that wait for it.
    let refresher: CredentialRefresher<IDToken>
    /// Whether a token without a readable expiry has been reported (once per store).
    private let reportedNoExpiry = Locked(false)

    /// Creates a store.
    ///
    /// ```swift
    /// let idTokens = try IDTokenStore(authorizedDomains: ["*.rover.io", "api.example.com:8443", "http://localhost:8080"])
    /// ```
    ///
    /// - Parameters:
    ///   - authorizedDomains: At least one pattern `[scheme "://"] host [":" port]`
    ///     (`AuthorizedDomain/init(_:)`): an exact host or one leading `*.` label; `https` unless
    ///     the pattern names `http`, which it may only for a loopback host; the scheme's default
    ///     port unless the pattern names another. A request on another scheme or port never sees
    ///     the token.
    ///   - options: Timeout, staleness leeway (each 0 to 86400 seconds) and timeout behaviour.
    ///   - clock: The time source for staleness and the wait limit.
    ///   - diagnostics: Where the timeout line and warnings go.
    ///   - observer: Told when a refresh starts and finishes and when a request's wait starts and
    ///     ends (`AuthorizationEvent`); `nil`, the default, costs nothing.
    ///   - credentialStore: Opt-in: where the ID token is kept between launches, under
    ///     `credentialIdentity` in the store's slot of kind `CredentialKind/idToken` scoped to the
    ///     authorized domains (``credentialKind``: no other mode, namespace or ID token store for
    ///     other domains reads it), so a cold start has the last token without waiting for the app.
    ///     It is loaded here, saved by ``setIDToken(_:)`` and removed by ``clearIDToken()``.
    ///   - credentialIdentity: The user the stored token belongs to (their ID, 1 to 100 bytes);
    ///     required with a `credentialStore`: there is no shared default, so one user's token never
    ///     serves another. ``switchIdentity(to:)`` and ``identityDidChange(to:)`` (what
    ///     `AuthorizedHTTPClient/identityDidChange(to:)` calls) change it.
    /// - Throws: `ConfigurationError/invalidValue(key:reason:)` for a bad pattern, no pattern, a
    ///   timeout or leeway that is negative or not finite, or a credential store without a valid
    ///   identity.
    public convenience init(
        authorizedDomains: [String],
        options: Options = Options(),
        clock: any AuthorizationClock = SystemClock(),
        diagnostics: any DiagnosticsSink = StandardErrorDiagnosticsSink.inDebugBuilds,
        observer: (any AuthorizationEventObserver)? = nil,
        credentialStore: (any CredentialStore)? = nil,
        credentialIdentity: String? = nil
    ) throws(ConfigurationError) {
        var domains: [AuthorizedDomain] = []
        for pattern in authorizedDomains { domains.append(try AuthorizedDomain(pattern)) }
        try self.init(authorizedDomains: domains, options: options, clock: clock, diagnostics: diagnostics, observer: observer,
                      credentialStore: credentialStore, credentialIdentity: credentialIdentity)
    }

    /// Creates a store for domains already parsed, such as the origin of a configured base URL:
    ///
    /// ```swift
    /// let idTokens = try IDTokenStore(authorizedDomains: [AuthorizedDomain(origin: baseURL)])
    /// ```
    ///
    /// - Parameters:
    ///   - authorizedDomains: At least one domain; a request that matches none never sees the token.
    ///   - options: Timeout, staleness leeway (each 0 to 86400 seconds) and timeout behaviour.
    ///   - clock: The time source for staleness and the wait limit.
    ///   - diagnostics: Where the timeout line and warnings go.
    ///   - observer: Told when a refresh starts and finishes and when a request's wait starts and ends.
    ///   - credentialStore: Opt-in: where the ID token is kept between launches, as for the
    ///     initializer that takes patterns.
    ///   - credentialIdentity: The user the stored token belongs to (their ID, 1 to 100 bytes);
    ///     required with a `credentialStore`.
    /// - Throws: `ConfigurationError/invalidValue(key:reason:)` for no domain, a timeout or
    ///   leeway that is negative or not finite, or a credential store without a valid identity.
    public init(
        authorizedDomains: [AuthorizedDomain],
        options: Options = Options(),
        clock: any AuthorizationClock = SystemClock(),
        diagnostics: any DiagnosticsSink = StandardErrorDiagnosticsSink.inDebugBuilds,
        observer: (any AuthorizationEventObserver)? = nil,
        credentialStore: (any CredentialStore)? = nil,
        credentialIdentity: String? = nil
    ) throws(ConfigurationError) {
        guard !authorizedDomains.isEmpty else {
            throw .invalidValue(key: "authorizedDomains", reason: "name at least one host that may receive the ID token")
        }
        guard options.refreshTimeout.isFinite, (0...AuthorizationOptions.maximumSeconds).contains(options.refreshTimeout) else {
            throw .invalidValue(key: "refreshTimeout", reason: "must be a number of seconds from 0 to 86400")
        }
        guard options.staleLeeway.isFinite, (0...AuthorizationOptions.maximumSeconds).contains(options.staleLeeway) else {
            throw .invalidValue(key: "staleLeeway", reason: "must be a number of seconds from 0 to 86400")
        }
        self.authorizedDomains = authorizedDomains
        self.credentialKind = .idToken.scoped(to: authorizedDomains.map(\.description).joined(separator: " "))
        self.options = options
        self.clock = clock
        self.diagnostics = diagnostics
        self.observer = observer
        try Credential.Identity.check(credentialIdentity, hasStore: credentialStore != nil, key: "credentialIdentity")
        self.credentialStore = credentialStore
        self.identity = Locked(credentialIdentity)
        let stored = Self.loadStored(from: credentialStore, identity: credentialIdentity, kind: credentialKind, diagnostics: diagnostics)
        let leeway = options.staleLeeway
        // Each request waits up to the timeout; a refresh lasts at most the timeout too (a request
        // that needs a token after that asks again). The callback asks the app, which may answer
        // with setIDToken later: it runs on when the requests leave.
        self.refresher = try CredentialRefresher(
            value: stored,
            options: .init(timeout: options.refreshTimeout, waitLimit: options.refreshTimeout, failures: .refreshFailed,
                           cancelsUnwatchedFetch: false, name: "ID token refresh", timeoutError: nil),
            clock: clock, diagnostics: diagnostics, observer: observer,
            isFresh: { $0.isFresh(on: clock, leeway: leeway) }, credential: { .bearer($0.token) })
    }

    /// The domains, options and whether a token is set; never the token.
    public var description: String {
        "IDTokenStore(domains: \(authorizedDomains.map(\.description)), token: \(refresher.current == nil ? "none" : "set, redacted"), waiting: \(waitingRequestCount))"
    }

    public var customMirror: Mirror {
        Mirror(self, children: ["authorizedDomains": authorizedDomains.map(\.description), "options": options, "description": description], displayStyle: .class)
    }

    /// The stable line logged when a wait runs out: `setIDToken was not called within 10 seconds`,
    /// followed by what happens to the request.
    public static func timeoutMessage(after seconds: TimeInterval) -> String {
        let formatted = seconds == seconds.rounded() && abs(seconds) < 1e15 ? String(Int(seconds)) : String(seconds)
        return "setIDToken was not called within \(formatted) seconds"
    }

    // MARK: The app's side

    /// Sets the ID token (at login and after each refresh) and resumes every waiting request with it.
    ///
    /// - Throws: `ConfigurationError/emptyCredential(field:)` or
    ///   `ConfigurationError/credentialContainsControlCharacters(field:)`; the current token is
    ///   then left as it was. To log out, call ``clearIDToken()``.
    public func setIDToken(_ token: String) throws(ConfigurationError) {
        let idToken = try checked(token)
        // The user this token is set for: read before the generation it lands in, so a switch in
        // between leaves it unstored (the generation or the user no longer match).
        let owner = identity.withLock { $0 }
        guard credentialStore == nil || owner != nil else {
            throw .invalidValue(key: "credentialIdentity", reason: "no user is named since the identity changed, and this store keeps the token per user: name the user with identityDidChange(to:) or switchIdentity(to:) first")
        }
        refresher.set(idToken, persist: { self.save(idToken, for: owner) })
        warnIfExpiringSoon(idToken)
    }

    /// Forgets the token (logout). Requests waiting for a token fail with
    /// `RequestError/Code/credentialCleared`; a refresh that returns after this is neither
    /// installed nor stored.
    public func clearIDToken() {
        // model: logout (reset, then the slot removed)
        refresher.clear(thenRemove: { persist { try $0.remove(identity: $1, kind: credentialKind) } })
    }

    /// The app's user changed to `identity` (their ID), or to no one (`nil`):
    /// `AuthorizedHTTPClient/identityDidChange(to:)` calls it. The previous user's token is
    /// forgotten and its stored copy removed, as by ``clearIDToken()``; waiting requests fail with
    /// `RequestError/Code/credentialCleared`, and a refresh that returns after this is neither
    /// installed nor stored. With a credential store, the store serves `identity` from now on (its
    /// stored token, if any, becomes the current one); with `nil` (or an identity a credential
    /// store cannot key by, which is logged) it has no user: requests fail with
    /// `RequestError/noUserNamed(endpoint:)` and ``setIDToken(_:)`` refuses until
    /// ``switchIdentity(to:)`` or the next identity change names one.
    public func identityDidChange(to identity: String?) async {
        var next = identity
        if let identity, !Credential.Identity.isValid(identity) {
            diagnostics.log(.warning, "The identity change named a user ID that is not 1 to 100 UTF-8 bytes; the ID token store keeps no user until one is named")
            next = nil
        }
        var previous: String?
        var generation: UInt64 = 0
        // model: switchUser (reset, the identity moved in its update, then the old slot removed)
        refresher.clear(updating: { created in
            generation = created
            previous = self.identity.withLock { current in
                defer { current = next }
                return current
            }
        }, thenRemove: { [credentialStore, diagnostics] in
            guard let credentialStore, let previous else { return }
            do {
                try credentialStore.remove(identity: previous, kind: credentialKind)
            } catch {
                diagnostics.log(.warning, "The ID token store could not be updated (\(CredentialStoreError.summary(of: error)))")
            }
        })
        if let stored = Self.loadStored(from: credentialStore, identity: next, kind: credentialKind, diagnostics: diagnostics) {
            // A later switch or logout wins.
            refresher.install(stored, ifGeneration: generation)
        }
    }

    /// Makes `identity` (the user's ID, 1 to 100 bytes, compared as exact UTF-8 bytes as
    /// `CredentialStore` says: `"jos\u{E9}"` and `"jose\u{301}"` are two users) the user whose
    /// token the credential store keeps: the current token is forgotten from memory (the previous user's stored copy stays, for
    /// when they return), waiting requests fail with `RequestError/Code/credentialCleared`, a
    /// refresh that returns after this is neither installed nor stored, and the token stored for
    /// `identity`, if any, becomes the current one.
    ///
    /// - Throws: `ConfigurationError/invalidValue(key:reason:)` for an empty or overlong identity,
    ///   or when the store has no credential store; nothing changes then.
    public func switchIdentity(to identity: String) throws(ConfigurationError) {
        try Credential.Identity.check(identity, hasStore: false, key: "credentialIdentity")
        guard credentialStore != nil else {
            throw .invalidValue(key: "credentialIdentity", reason: "names where a credential store keeps the token, and this IDTokenStore has none")
        }
        // The generation this switch creates, not the one current when the reset returns: a switch
        // or logout that overtakes this one has bumped it, and this one's stored token (another
        // user's) must not land in it.
        var generation: UInt64 = 0
        // model: switchUser (reset, the identity moved in its update)
        refresher.clear(updating: { created in
            generation = created
            self.identity.withLock { $0 = identity }
        })
        if let stored = Self.loadStored(from: credentialStore, identity: identity, kind: credentialKind, diagnostics: diagnostics) {
            // A later switch or logout wins: an overtaken switch installs nothing.
            refresher.install(stored, ifGeneration: generation)
        }
    }


    /// The token stored for `identity`, if it is one a request may carry; a read failure is logged.
    private static func loadStored(from store: (any CredentialStore)?, identity: String?, kind: CredentialKind, diagnostics: any DiagnosticsSink) -> IDToken? {
        guard let store, let identity else { return nil }
        do {
            if let saved = try store.load(identity: identity, kind: kind), HeaderFieldRules.check(saved.token) == .valid { return IDToken(saved.token) }
        } catch {
            diagnostics.log(.warning, "The stored ID token could not be read (\(CredentialStoreError.summary(of: error))); waiting for setIDToken")
        }
        return nil
    }

    /// `token`, checked, as it arrives now.
    private func checked(_ token: String) throws(ConfigurationError) -> IDToken {
        try ConfigurationError.checkCredential(token, field: "ID token")
        return IDToken(token, arrivedOn: clock, leeway: options.staleLeeway)
    }

    private func warnIfExpiringSoon(_ token: IDToken) {
        guard let remaining = token.remaining(on: clock) else {
            // Without an expiry the store cannot refresh ahead of time: only the server's rejection
            // tells it the token is stale. Said once per store, not on every refresh.
            if reportedNoExpiry.withLock({ reported in defer { reported = true }; return !reported }) {
                diagnostics.log(.warning, "The ID token set has no readable expiry (it is not a JWT with a numeric 'exp'); it is sent as it is, and refreshed only when the server rejects it")
            }
            return
        }
        if remaining < options.staleLeeway {
            diagnostics.log(.warning, "The ID token set expires within \(Int(options.staleLeeway)) seconds; requests will ask for a refresh again")
        }
    }

    /// Stores `token` in the slot of `owner`, the user it was set or fetched for: never in another
    /// user's slot. Runs under the refresher's persistence lock, only while no logout or switch
    /// came since the token was set or its fetch began.
    private func save(_ token: IDToken, for owner: String?) {
        // model: persist (the owner read when the token was set or its fetch started, checked against the slot's identity under the persistence lock)
        persist { store, identity in
            guard let owner, owner.utf8.elementsEqual(identity.utf8) else { return }
            try store.save(StoredCredential(token: token.token, expiresAt: token.expiresAt), identity: owner, kind: credentialKind)
        }
    }

    /// Runs `change` on the credential store and the current identity, if any; a failure is
    /// logged, never thrown.
    private func persist(_ change: (any CredentialStore, String) throws -> Void) {
        guard let credentialStore, let identity = identity.withLock({ $0 }) else { return }
        do {
            try change(credentialStore, identity)
        } catch {
            diagnostics.log(.warning, "The ID token store could not be updated (\(CredentialStoreError.summary(of: error)))")
        }
    }

    /// Registers the callback invoked when requests need a new token. It should lead to
    /// ``setIDToken(_:)``. It runs in its own task, once for any number of waiting requests.
    public func registerRefreshCallback(_ callback: @escaping @Sendable () async -> Void) {
        self.callback.withLock { $0 = .async(callback) }
    }

    /// Registers a callback that fetches the new token and returns it; the store sets it.
    ///
    /// It runs in its own task, once for any number of waiting requests. When it throws (or returns
    /// a token ``setIDToken(_:)`` refuses), every waiting request fails at once with
    /// `RequestError/Code/refreshFailed` carrying the error, instead of waiting out the timeout;
    /// the next request that needs a token asks again. A token it returns after
    /// ``clearIDToken()`` is dropped.
    public func registerTokenRefresh(_ callback: @escaping @Sendable () async throws -> String) {
        self.callback.withLock { $0 = .returningToken(callback) }
    }

    /// Registers a plain closure as the refresh callback. It runs on a global dispatch queue, once
    /// for any number of waiting requests.
    public func registerRefreshCallback(synchronous callback: @escaping @Sendable () -> Void) {
        self.callback.withLock { $0 = .sync(callback) }
    }

    /// The current token, if any (fresh or not).
    public var currentToken: String? { refresher.current?.token }

    /// How many requests are waiting for a token now.
    public var waitingRequestCount: Int { refresher.waitingCount }

    /// The user whose token the credential store keeps now (for tests).
    var credentialIdentity: String? { identity.withLock { $0 } }

    /// Waits and alarms still held; zero when nothing waits (for leak tests).
    var heldWaitRecords: Int { refresher.heldRecords }

    // MARK: AuthorizationProvider

    public func credential(for context: AuthorizationContext) async throws -> Credential {
        guard authorizedDomains.contains(where: { $0.matches(context.url) }) else {
            return .omitted
        }
        // A credential store keeps one user's token: after an identity change that named no user,
        // nothing is asked for or stored until one is named.
        if credentialStore != nil, identity.withLock({ $0 }) == nil { throw RequestError.noUserNamed(endpoint: context.endpoint) }
        do {
            return try await refresher.credential(for: context, fetch: fetchToken)
        } catch let error as RequestError where error.code == .credentialTimedOut {
            switch options.timeoutBehavior {
            case .sendWithoutToken:
                diagnostics.log(.warning, "\(Self.timeoutMessage(after: options.refreshTimeout)); sending \(context.requestName) without the ID token",
                                endpoint: context.endpoint, scheme: context.scheme, event: AuthorizationEvent.Kind.waitEnded.rawValue)
                return .omitted
            case .fail:
                diagnostics.log(.warning, "\(Self.timeoutMessage(after: options.refreshTimeout)); failing \(context.requestName)",
                                endpoint: context.endpoint, scheme: context.scheme, event: RequestError.Code.credentialTimedOut.rawValue)
                throw error
            }
        }
    }

    /// Invokes the refresh callback: the first request that needs a token and finds no refresh
    /// running (or the last one past the timeout) does this, once. Returns the token when the
    /// callback returns one; otherwise `nil`, and the app answers with ``setIDToken(_:)``.
    private func fetchToken(_ refresh: CredentialRefresher<IDToken>.Refresh) async throws -> IDToken? {
        // The user this refresh is for: the identity of its generation.
        let owner = identity.withLock { $0 }
        switch callback.withLock({ $0 }) {
        case .async(let callback)?:
            await callback()
        case .sync(let callback)?:
            DispatchQueue.global().async { callback() }
        case .returningToken(let callback)?:
            let token = try checked(try await callback())
            // Installing it would only make the next request refresh again, in a loop.
            if !token.isFresh(on: clock, leeway: 0) { throw RequestError.refreshedCredentialExpired(endpoint: nil) }
            // Stored before the waiting requests resume (a relaunch right after one finds it), and
            // only while no logout came since the refresh began.
            refresh.persist { self.save(token, for: owner) }
            warnIfExpiringSoon(token)
            return token
        case nil:
            diagnostics.log(.warning, "A request needs an ID token but no refresh callback is registered; waiting for setIDToken")
        }
        return nil
    }

    /// A 401 from an authorized host marks the rejected token stale and asks for one retry; any other
    /// rejection fails the request.
    public func credentialRejected(_ credential: Credential, response: ServerResponse, context: AuthorizationContext) async -> RejectionDecision {
        guard response.statusCode == 401, authorizedDomains.contains(where: { $0.matches(context.url) }) else {
            return .fail
        }
        return refresher.rejected(credential, response: response)
    }

    /// The user changed and no new one is named: as ``identityDidChange(to:)`` with `nil`.
    public func identityDidChange() async {
        // model: switchUser with -DAPP_IDENTITY_DID_CHANGE (now to no user: the identity is not kept)
        await identityDidChange(to: nil)
    }

    /// `true`: every wait ends by the request's deadline or at cancellation.
    public var endsByDeadline: Bool { true }
}

/// The async refresh-callback mode (`SDKAuthorization.IDTokenRefresh`): an ``IDTokenStore``
/// authorized for the configuration's base URL origin, its scheme, host and port
/// (`AuthorizedDomain/init(origin:)`): a base URL `http://127.0.0.1:8080` authorizes that origin
/// only, and an `http` base URL on a host that is not loopback is refused. Register it with the
/// refresh callback, so the store it makes asks the app for a token from the first request:
///
/// ```swift
/// registry.register(IDTokenRefreshMode(refresh: { await session.renewIDToken() }))
/// ```
///
/// The app sets the token with `setIDToken(_:)` on `client.provider as? IDTokenStore`, or, with
/// ``init(tokenRefresh:credentialStore:credentialIdentity:)``, returns it from the callback.
public struct IDTokenRefreshMode: NamedProviderFactory {
    /// `SDKAuthorization.IDTokenRefresh`.
    public static let providerName = "SDKAuthorization.IDTokenRefresh"

    private let register: @Sendable (IDTokenStore) -> Void
    private let credentialStore: (any CredentialStore)?
    private let credentialIdentity: String?

    /// The mode whose store runs `refresh` when requests need a new token
    /// (``IDTokenStore/registerRefreshCallback(_:)``); `nil` registers none (the app registers one
    /// on the store later).
    ///
    /// - Parameters:
    ///   - refresh: The refresh callback, or `nil`.
    ///   - credentialStore: Where the token is kept across launches (``IDTokenStore``'s
    ///     `credentialStore`); `nil`, the default, keeps it in memory only.
    ///   - credentialIdentity: The user the kept token belongs to (`credentialIdentity`).
    public init(refresh: (@Sendable () async -> Void)?, credentialStore: (any CredentialStore)? = nil, credentialIdentity: String? = nil) {
        register = { store in if let refresh { store.registerRefreshCallback(refresh) } }
        self.credentialStore = credentialStore
        self.credentialIdentity = credentialIdentity
    }

    /// The mode whose store sets the token `tokenRefresh` returns (``IDTokenStore/registerTokenRefresh(_:)``).
    ///
    /// - Parameters:
    ///   - tokenRefresh: Returns a new token.
    ///   - credentialStore: Where the token is kept across launches; `nil`, the default, keeps it in memory only.
    ///   - credentialIdentity: The user the kept token belongs to.
    public init(tokenRefresh: @escaping @Sendable () async throws -> String, credentialStore: (any CredentialStore)? = nil,
                credentialIdentity: String? = nil) {
        register = { store in store.registerTokenRefresh(tokenRefresh) }
        self.credentialStore = credentialStore
        self.credentialIdentity = credentialIdentity
    }

    /// A new ``IDTokenStore`` for the configuration's base URL origin, with the callback and the
    /// credential store, if any.
    public func makeProvider(for context: ProviderFactoryContext) throws -> any AuthorizationProvider {
        let store = try IDTokenStore(
            authorizedDomains: [AuthorizedDomain(origin: context.baseURL)],
            clock: context.clock,
            diagnostics: context.diagnostics,
            observer: context.observer,
            credentialStore: credentialStore,
            credentialIdentity: credentialIdentity
        )
        register(store)
        return store
    }
}
