import Foundation
import SDKAuthorization
import SDKAuthorizationModeKit

/// The payload-signing and token-exchange mode (Google CCAI Platform style): when a request needs
/// a token and none is fresh, the framework asks the host app to sign a payload, exchanges the
/// signed JWT at the platform for an end-user auth token, and sends that token as
/// `Authorization: Bearer <token>` until it expires.
///
/// ```swift
/// let exchange = try TokenExchangeProvider(
///     exchangeURL: URL(string: "https://platform.example.com/ccai/exchange")!,
///     signer: .async { payload in try await myServer.sign(payload.claims) },
///     defaultClaims: ["push_token": .string(pushToken)],
///     identity: userID,
///     store: PlatformCredentialStore(namespace: try CredentialNamespace("com.example.chat-sdk"))
/// )
/// var policy = AuthorizationPolicy()
/// policy.add(try AuthorizationRule(host: "platform.example.com", path: "/ccai/**", scheme: .bearer))
/// let client = AuthorizedHTTPClient(authorizer: try RequestAuthorizer(policy: policy, providers: [.bearer: exchange]))
/// ```
///
/// - Concurrent requests share one sign-and-exchange: 100 requests, one signing callback.
/// - The signer answers once; a second answer is ignored and logged; no answer within
///   ``Options/signingTimeout`` fails the waiting requests with `RequestError/Code/signingTimedOut`.
/// - The signed payload is checked before it is sent: a compact JWT with an `iat` and a numeric
///   `exp` in the future. An `iat` that is not a number (a date string, as the vendor's Ruby sample
///   `payload["iat"] = Time.now` encodes it) and a `phone` not in E.164 form (`+` and 2 to 15
///   digits, which the vendor recommends) are the platform's to judge: they are sent, with one
///   diagnostic warning each. An unusable payload fails with `RequestError/Code/signingFailed`,
///   which says why.
/// - The auth token is kept until ``Options/expiryLeeway`` before it expires, in memory and, when a
///   `CredentialStore` is given, on disk for the next launch under the ``identity`` the app names
///   (the user's ID: there is no shared default, so one user's token never serves another).
///   ``switchIdentity(to:)`` moves to another user's slot; ``clearUserData()`` (logout) empties the
///   current one; a change of user through `AuthorizedHTTPClient/identityDidChange(to:)`
///   (``identityDidChange(to:)``) empties the previous user's slot and moves to the new user's, and
///   one that names no user leaves the provider without one: it fails requests with
///   `RequestError/noUserNamed(endpoint:)` rather than exchange a token it could only store in the
///   wrong slot. A token is stored only in the slot of the user it was exchanged for, before the
///   requests waiting for it resume; a save, a load or a sign-and-exchange that a switch or a
///   logout overtakes is discarded, never stored or used.
/// - Expiry is counted on both clocks: the wall-clock expiry (kept in the store) and a monotonic one
///   (`expires_in` after the answer, or after the load for a stored token), so a wall clock set back
///   never keeps a token in use past its lifetime.
/// - The platform's answer is checked before it is used: an `auth_token` longer than
///   ``maximumAuthTokenLength`` bytes, or an `expires_in` not longer than ``Options/expiryLeeway``
///   (a token that would be stale on arrival, so every request would sign and exchange again), fails
///   the waiting requests with `RequestError/Code/exchangeFailed`; nothing is sent or stored.
/// - An answer larger than ``maximumAnswerSize`` bytes is refused before it is parsed
///   (`RequestError/Code/exchangeFailed`).
/// - A refused or unusable answer (any HTTP status but 200, a missing, overlong or too-short-lived
///   token, an oversized answer) is remembered: no request signs or exchanges again for 1 second,
///   then 2, 4, … doubling with each refusal in a row up to 5 minutes, on the clock's monotonic
///   time. A request in that time uses the current token while it has not expired, or fails at once
///   with `RequestError/Code/exchangeFailed` saying when the next exchange may be tried. An
///   exchange the platform answers with a usable token, ``switchIdentity(to:)`` and
///   ``clearUserData()`` end the backoff. A request that cannot reach the platform at all (a
///   transport error) is not remembered.
/// - Text from the platform or the signer that goes into an error message is cut to 200 characters,
///   with control characters, bidirectional overrides and other non-ASCII escaped.
/// - A 401 or 403 to a request that carried the token drops it; the request is signed, exchanged
///   and sent once more; a second rejection fails it.
/// - ``clearUserData()`` (logout) forgets the token and its stored copy. A request sent before it
///   and rejected after it fails as `RequestError/Code/credentialCleared`, without a signing or a
///   second send, even when the app wraps the provider in a decorator of its own: the provider
///   notes on each request the generation its token came from.
public final class TokenExchangeProvider: AuthorizationProvider, Sendable, CustomStringConvertible, CustomReflectable {
    /// Timeouts and margins.
    public struct Options: Sendable, Equatable {
        /// Seconds the signer has to answer (default 30, at most 600).
        public var signingTimeout: TimeInterval
        /// Seconds the platform has to answer the exchange (default 30, at most 600). A
        /// sign-and-exchange still running after `signingTimeout + exchangeTimeout` fails its
        /// waiting requests with `RequestError/Code/exchangeFailed` and the next request starts anew.
        public var exchangeTimeout: TimeInterval
        /// An auth token is not used within this many seconds of its expiry (default 30).
        public var expiryLeeway: TimeInterval

        /// Creates options.
        public init(signingTimeout: TimeInterval = 30, exchangeTimeout: TimeInterval = 30, expiryLeeway: TimeInterval = 30) {
            self.signingTimeout = signingTimeout
            self.exchangeTimeout = exchangeTimeout
            self.expiryLeeway = expiryLeeway
        }
    }

    /// The longest `auth_token` taken from the platform, in UTF-8 bytes (8 KiB).
    public static let maximumAuthTokenLength = 8_192

    /// The largest exchange answer read, in bytes (64 KiB): a larger one is refused before it is
    /// parsed.
    public static let maximumAnswerSize = 65_536

    /// Seconds nothing is exchanged after the first refused or unusable answer in a row; doubled
    /// with each further one, up to ``maximumExchangeBackoff``.
    static let firstExchangeBackoff: TimeInterval = 1
    /// The longest wait between two exchanges the platform refused (5 minutes).
    static let maximumExchangeBackoff: TimeInterval = 300

    /// Where signed payloads are exchanged.
    public let exchangeURL: URL
    /// The store key of this provider's token: the user it belongs to, as the app named it; `nil`
    /// when nothing is stored.
    public var identity: String? { binding.withLock(\.identity) }
    /// The options in force.
    public let options: Options
    /// The store slot of this provider's token: `CredentialKind/tokenExchange` scoped to the
    /// exchange URL (its scheme, host, port and path), so two providers exchanging at two URLs (two
    /// regions, two tenants) with one store and one user never load each other's token: each is
    /// refused the other's (`CredentialStoreError/Code/foreignCredential`).
    public let credentialKind: CredentialKind

    /// How payloads are signed; ``setSigner(_:)`` replaces it.
    private let signer: Locked<PayloadSigner>
    private let defaultClaims: [String: JWTClaimValue]
    private let store: (any CredentialStore)?
    private let transport: any HTTPTransport
    private let clock: any AuthorizationClock
    private let diagnostics: any DiagnosticsSink
    /// The auth token, the one sign-and-exchange that runs, and the requests that wait for it.
    let refresher: CredentialRefresher<ExchangedToken>
    /// The signing timeouts.
    private let alarms: Alarms
    /// Whose token the store keeps, and the generation of ``refresh`` that read it. Changed with the
    /// generation, under its lock: whoever reads a generation reads the identity it belongs to, so a
    /// save or a load of an earlier generation never lands in another user's slot.
    private let binding: Locked<(identity: String?, loadedIn: UInt64?)>
    /// The platform's refusals in a row and when the next exchange may be tried. Ended, with the
    /// generation, by a switch or a logout (under the lock of ``refresher``, then this one).
    private let backoff: Locked<ExchangeBackoff>
    /// The payload warnings already reported (each once).
    private let payloadWarnings = Locked(Set<PayloadWarning>())

    /// Refused or unusable exchange answers in a row, and when the next exchange may be tried.
    struct ExchangeBackoff: Sendable {
        var refusals = 0
        /// Monotonic seconds before which nothing is signed or exchanged.
        var until: TimeInterval = 0
        /// Why the last answer was refused.
        var reason = ""
    }

    /// An auth token with its expiry on the monotonic clock beside the wall-clock one, and the
    /// user it was fetched (or loaded) for: it is stored in that user's slot or nowhere.
    struct ExchangedToken: Sendable {
        let credential: StoredCredential
        let monotonicExpiry: TimeInterval
        /// The identity bound when the sign-and-exchange started, or whose slot it was loaded from.
        var identity: String? = nil
    }

    /// Creates the provider.
    ///
    /// - Parameters:
    ///   - exchangeURL: The platform's exchange endpoint (`POST {"token": <signed JWT>}`, answered
    ///     with `{"auth_token": ..., "expires_in": ...}`); https, or http on a loopback host only
    ///     (`localhost`, `127.0.0.0/8`, `[::1]`), as for a local test backend.
    ///   - signer: How the host app signs payloads.
    ///   - defaultClaims: Claims the framework fills before asking (a device or push token, a default name).
    ///   - identity: The store key (1 to 100 bytes, compared as exact UTF-8 bytes): the user's ID.
    ///     Required with a `store`.
    ///   - store: Where the auth token is kept between launches; `nil` keeps it in memory only.
    ///   - transport: How the exchange request is sent.
    ///   - options: Signing timeout and expiry leeway.
    ///   - clock: Wall-clock time for token expiry, monotonic time for the signing timeout.
    ///   - diagnostics: Where double answers, timeouts and store failures are reported.
    /// - Throws: `ConfigurationError/invalidValue(key:reason:)` for a URL that is not https (or
    ///   http on a loopback host), a store without an identity, an empty or overlong identity, or
    ///   options out of range.
    public init(
        exchangeURL: URL,
        signer: PayloadSigner,
        defaultClaims: [String: JWTClaimValue] = [:],
        identity: String? = nil,
        store: (any CredentialStore)? = nil,
        transport: any HTTPTransport = URLSessionHTTPTransport(),
        options: Options = Options(),
        clock: any AuthorizationClock = SystemClock(),
        diagnostics: any DiagnosticsSink = StandardErrorDiagnosticsSink.inDebugBuilds
    ) throws(ConfigurationError) {
        guard let scheme = exchangeURL.scheme?.lowercased(), scheme == "http" || scheme == "https", let host = exchangeURL.host, !host.isEmpty else {
            throw .invalidValue(key: "exchangeURL", reason: "must be an https URL with a host")
        }
        guard scheme == "https" || HostName.isLoopback(host) else {
            // The signed payload and the auth token would cross the network in the clear.
            throw .invalidValue(key: "exchangeURL", reason: "must be https; http is allowed only on a loopback host (localhost, 127.0.0.0/8, [::1])")
        }
        try Credential.Identity.check(identity, hasStore: store != nil, key: "identity")
        guard options.signingTimeout.isFinite, options.signingTimeout > 0, options.signingTimeout <= 600 else {
            throw .invalidValue(key: "signingTimeout", reason: "must be more than 0 and at most 600 seconds")
        }
        guard options.exchangeTimeout.isFinite, options.exchangeTimeout > 0, options.exchangeTimeout <= 600 else {
            throw .invalidValue(key: "exchangeTimeout", reason: "must be more than 0 and at most 600 seconds")
        }
        guard options.expiryLeeway.isFinite, (0...3_600).contains(options.expiryLeeway) else {
            throw .invalidValue(key: "expiryLeeway", reason: "must be from 0 to 3600 seconds")
        }
        self.exchangeURL = exchangeURL
        self.credentialKind = Self.credentialKind(for: exchangeURL)
        self.signer = Locked(signer)
        self.defaultClaims = defaultClaims
        self.binding = Locked((identity, nil))
        self.store = store
        self.transport = transport
        self.options = options
        self.clock = clock
        self.diagnostics = diagnostics
        self.alarms = Alarms(clock: clock)
        let backoff = Locked(ExchangeBackoff())
        self.backoff = backoff
        let leeway = options.expiryLeeway
        self.refresher = try CredentialRefresher(
            options: .init(timeout: options.signingTimeout + options.exchangeTimeout, rejectionStatuses: [401, 403], name: "token exchange",
                           timeoutError: { lifetime in
                               .exchangeFailed(reason: "no auth token within \(lifetime) seconds of signing and exchanging", response: nil, underlyingError: nil)
                           }),
            clock: clock, diagnostics: diagnostics,
            isFresh: { token in
                // While the platform's last refusal holds exchanges back, a token that has not
                // expired yet still serves: no signing storm.
                token.isFresh(on: clock, leeway: leeway)
                    || (backoff.withLock { $0.until > clock.monotonicNow() } && token.isFresh(on: clock, leeway: 0))
            },
            credential: { .bearer($0.credential.token) })
    }

    public var description: String {
        let hasToken = refresher.current != nil
        return "TokenExchangeProvider(\(LogText.url(exchangeURL)), token: \(hasToken ? "set, redacted" : "none"))"
    }

    public var customMirror: Mirror { Mirror(self, children: ["description": description], displayStyle: .class) }

    // MARK: AuthorizationProvider

    public func credential(for context: AuthorizationContext) async throws -> Credential {
        // A store keeps one user's token: after an identity change that named no user, nothing is
        // fetched (it could only be stored for the wrong user, or for no one) until one is named.
        if store != nil, binding.withLock({ $0.identity }) == nil { throw RequestError.noUserNamed(endpoint: context.endpoint) }
        loadFromStoreOnce()
        // The platform refused the last exchange: no signing storm. A token that has not expired
        // yet still serves (the refresher counts it fresh meanwhile).
        let clock = clock
        if let refusal = backoffError(), refresher.current(where: { $0.isFresh(on: clock, leeway: 0) }) == nil {
            throw refusal.withEndpoint(context.endpoint)
        }
        return try await refresher.credential(for: context, fetch: signAndExchange)
    }

    /// A 401 or 403 to a request that carried the current token drops it and asks for one retry,
    /// which signs and exchanges anew.
    public func credentialRejected(_ credential: Credential, response: ServerResponse, context: AuthorizationContext) async -> RejectionDecision {
        // Its stored copy goes too, only while the user it belonged to is still the current one: a
        // switch since leaves the new user's stored token alone.
        refresher.rejected(credential, response: response, marked: removeStored)
    }

    /// The user changed and no new one is named: as ``identityDidChange(to:)`` with `nil`.
    public func identityDidChange() async {
        await identityDidChange(to: nil)
    }

    /// The app's user changed to `identity` (their ID), or to no one (`nil`):
    /// `AuthorizedHTTPClient/identityDidChange(to:)` calls it. The previous user's token is
    /// forgotten and its stored copy removed, as by ``clearUserData()``, a sign-and-exchange in
    /// flight is cancelled and what it returns late is neither used nor stored, and the provider
    /// serves `identity` from now on: the token stored for it, if any, or a new exchange stored in
    /// its slot. With a store and `nil` (or an identity the store cannot key by, which is logged), the
    /// provider has no user: requests fail with `RequestError/noUserNamed(endpoint:)` and nothing is
    /// stored until ``switchIdentity(to:)`` or the next identity change names one.
    public func identityDidChange(to identity: String?) async {
        var next = identity
        if let identity, !Credential.Identity.isValid(identity) {
            diagnostics.log(.warning, "The identity change named a user ID that is not 1 to 100 UTF-8 bytes; the token-exchange provider keeps no user until one is named")
            next = nil
        }
        var previous: String?
        refresher.clear(updating: { generation in
            binding.withLock { binding in
                previous = binding.identity
                // Not read again in this generation: the new user's stored token is read by the next request.
                binding = (next, nil)
            }
            backoff.withLock { $0 = ExchangeBackoff() }
        }, thenRemove: { removeStored(for: previous) })
    }

    /// `true`: every wait ends by the request's deadline or at cancellation.
    public var endsByDeadline: Bool { true }

    /// Forgets the auth token and its stored copy (logout). A sign-and-exchange in flight is
    /// cancelled, and what it returns late is neither used nor stored.
    public func clearUserData() {
        // Not read again in the new generation: if the removal fails, the old token stays out of use.
        var identity: String?
        refresher.clear(updating: { generation in
            identity = binding.withLock { binding in
                binding.loadedIn = generation
                return binding.identity
            }
            backoff.withLock { $0 = ExchangeBackoff() }
        }, thenRemove: { removeStored(for: identity) })
    }

    /// Makes `identity` (the user's ID, 1 to 100 bytes, compared as exact UTF-8 bytes as
    /// `CredentialStore` says: `"jos\u{E9}"` and `"jose\u{301}"` are two users) the user this
    /// provider serves: the current token is forgotten from memory (the previous user's stored copy
    /// stays, for when they return), a sign-and-exchange in flight is cancelled and what it returns
    /// late is neither used nor stored, a backoff after the platform's refusals ends, waiting
    /// requests fail with `RequestError/Code/credentialCleared`, and the next
    /// request uses the token stored for `identity`, or signs and exchanges anew.
    ///
    /// - Throws: `ConfigurationError/invalidValue(key:reason:)` for an empty or overlong identity;
    ///   nothing changes then.
    public func switchIdentity(to identity: String) throws(ConfigurationError) {
        try Credential.Identity.check(identity, hasStore: false, key: "identity")
        refresher.clear(updating: { _ in
            binding.withLock { $0 = (identity, nil) }
            backoff.withLock { $0 = ExchangeBackoff() }
        })
    }

    /// Replaces how the host app signs payloads; the next sign-and-exchange asks `signer` (one
    /// already asking the previous signer keeps waiting for its answer). A provider the registry
    /// made by name (`SDKAuthorization.TokenExchange`) starts without a signer: give it the app's
    /// here, before the first request that needs a token, which otherwise fails with
    /// `RequestError/Code/signingFailed`.
    ///
    /// ```swift
    /// if let exchange = client.provider as? TokenExchangeProvider {
    ///     exchange.setSigner(.async { payload in try await myServer.sign(payload.claims) })
    /// }
    /// ```
    public func setSigner(_ signer: PayloadSigner) {
        self.signer.withLock { $0 = signer }
    }

    /// The current auth token, if any (fresh or not).
    public var currentToken: String? { refresher.current?.credential.token }


    // MARK: Signing and exchanging

    private func loadFromStoreOnce() {
        guard let store else { return }
        // The generation is read first: a switch or a logout after it bumps it, and the load below
        // is then discarded (the next request of the new generation reads again).
        let generation = refresher.credentialGeneration
        guard let identity = binding.withLock({ binding -> String? in
            guard binding.loadedIn != generation else { return nil }
            binding.loadedIn = generation
            return binding.identity
        }) else { return }
        do {
            if let stored = try store.load(identity: identity, kind: credentialKind), let expiresAt = stored.expiresAt {
                // A stored expiry counts on the monotonic clock from now, at most the longest
                // lifetime an exchange gives.
                let remaining = min(expiresAt.timeIntervalSince(clock.now()), Self.maximumLifetime)
                let token = ExchangedToken(credential: stored, monotonicExpiry: clock.monotonicNow() + remaining, identity: identity)
                // A logout or a switch while it loaded wins.
                refresher.install(token, ifGeneration: generation)
            }
        } catch {
            diagnostics.log(.warning, "The stored auth token could not be read (\(CredentialStoreError.summary(of: error))); a new one is exchanged")
        }
    }

    /// Removes the current identity's stored token. Runs under the persistence lock, or after a
    /// rejection of the token it holds.
    private func removeStored() {
        removeStored(for: binding.withLock { $0.identity })
    }

    /// Removes the token stored for `identity`, if any.
    private func removeStored(for identity: String?) {
        guard let store, let identity else { return }
        do {
            try store.remove(identity: identity, kind: credentialKind)
        } catch {
            diagnostics.log(.warning, "The stored auth token could not be removed (\(CredentialStoreError.summary(of: error)))")
        }
    }

    /// One flight: sign, check, exchange, then store (unless a logout or a switch came meanwhile)
    /// and deliver to the waiting requests, in that order: a request that returns with the token
    /// finds it stored already, so a relaunch right after it does not exchange again.
    private func signAndExchange(_ refresh: CredentialRefresher<ExchangedToken>.Refresh) async throws -> ExchangedToken {
        // The user this exchange is for: the identity of the refresh's generation (a switch or a
        // logout bumps the generation before it changes the identity, and then nothing is stored).
        let identity = binding.withLock { $0.identity }
        // A request that joined just as a refusal came in: neither sign nor exchange.
        if let refusal = backoffError() { throw refusal }
        var claims = defaultClaims
        claims["payload_type"] = .string(SigningPayload.Kind.authToken.rawValue)
        let signed = try await requestSignature(SigningPayload(kind: .authToken, claims: claims))
        try checkSignedPayload(signed)
        var token = try await exchange(signed, refresh: refresh)
        token.identity = identity
        refresh.persist { save(token) }
        refresh.whileCurrent { backoff.withLock { $0 = ExchangeBackoff() } }
        return token
    }

    /// Stores `token` in the slot of the user it was fetched for, and only while that user is still
    /// the provider's: never in another user's slot. Runs under the persistence lock.
    private func save(_ token: ExchangedToken) {
        guard let store, let identity = token.identity else { return }
        guard let current = binding.withLock({ $0.identity }), current.utf8.elementsEqual(identity.utf8) else {
            diagnostics.log(.info, "An auth token fetched for the previous user was not stored: the user changed while it was exchanged")
            return
        }
        do {
            try store.save(token.credential, identity: identity, kind: credentialKind)
        } catch {
            diagnostics.log(.warning, "The auth token could not be stored (\(CredentialStoreError.summary(of: error))); it is kept in memory")
        }
    }

    /// Asks the signer and takes its first answer; fails at the signing timeout (on the monotonic
    /// clock) or when the flight is cancelled (``Alarms/firstAnswer(by:endpoint:_:)``: the core's
    /// one first-answer-wins wait).
    private func requestSignature(_ payload: SigningPayload) async throws -> String {
        let timeout = options.signingTimeout
        do {
            return try await alarms.firstAnswer(by: RequestDeadline(seconds: timeout, from: clock)) { answer in
                let deliver: @Sendable (Result<String, any Error>) -> Void = { [diagnostics] result in
                    let result = result.mapError { error -> any Error in
                        // The app's own message is cut and escaped like any text from outside.
                        (error as? RequestError)?.sanitized()
                            ?? RequestError.signingFailed(reason: "the signer failed (\(RequestError.summary(of: error)))", underlyingError: error)
                    }
                    if !answer(result) {
                        diagnostics.log(.warning, "The payload signer answered more than once (or after the timeout); the later answer was ignored")
                    }
                }
                switch signer.withLock({ $0 }).form {
                case .completion(let sign):
                    sign(payload, deliver)
                case .async(let sign):
                    Task {
                        do { deliver(.success(try await sign(payload))) } catch { deliver(.failure(error)) }
                    }
                }
            }
        } catch let error as RequestError where error.code == .deadlineExceeded {
            diagnostics.log(.warning, "The payload signer did not answer within \(timeout) seconds; the waiting requests fail")
            throw RequestError.signingTimedOut(after: timeout)
        }
    }

    /// The signed payload must be a JWT with an `iat` and a numeric `exp` in the future. What the
    /// platform judges is passed on, with one warning each: an `iat` that is not a number of seconds
    /// (a date string, as a Ruby `Time` encodes it; a string of digits is the number it spells) and
    /// a `phone` that is not in E.164 form (`""` counts as no phone).
    private func checkSignedPayload(_ signed: String) throws(RequestError) {
        let claims: JWTClaims
        do {
            claims = try JWTClaims(decoding: signed, digitStringDates: ["iat"], unreadDates: ["iat"])
        } catch {
            // JWTDecodingError's text is the framework's own; the one part from the token (a
            // duplicated claim's name) it escapes and cuts itself.
            throw .signingFailed(reason: "the signer did not return a JWT (\(error))")
        }
        switch claims[claim: "iat"] {
        case nil, .null?:
            throw .signingFailed(reason: "the signed payload has no 'iat'")
        case _ where claims.issuedAt == nil:
            warnOnce(.issuedAt, "The signed payload's 'iat' is not a number of seconds since 1970 (a date string, as Ruby's Time encodes it?); it is exchanged as it is, and the platform judges it")
        default:
            break
        }
        guard let expiresAt = claims.expiresAt else { throw .signingFailed(reason: "the signed payload has no numeric 'exp'") }
        guard expiresAt > clock.now() else { throw .signingFailed(reason: "the signed payload has already expired") }
        // `phone: ""` (the vendor's own samples, for a user without one) counts as no phone.
        if let phone = claims[claim: "phone"], phone != .string(""), phone != .null {
            if case .string(let number) = phone, Self.isE164(number) { return }
            warnOnce(.phone, "The signed payload's 'phone' is not in E.164 form ('+' then 2 to 15 digits, e.g. +14155550100); it is exchanged as it is, and the platform judges it. The vendor: \"Google Cloud recommends using the E.164 format for phone numbers.\"")
        }
    }

    /// A signed payload's claim the platform judges, reported once per provider.
    enum PayloadWarning: Hashable, Sendable { case issuedAt, phone }

    private func warnOnce(_ warning: PayloadWarning, _ message: String) {
        guard payloadWarnings.withLock({ $0.insert(warning).inserted }) else { return }
        diagnostics.log(.warning, message)
    }

    static func isE164(_ number: String) -> Bool {
        let bytes = Array(number.utf8)
        guard bytes.count >= 3, bytes.count <= 16, bytes[0] == UInt8(ascii: "+"), bytes[1] != UInt8(ascii: "0") else { return false }
        return bytes.dropFirst().allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    private func exchange(_ signed: String, refresh: CredentialRefresher<ExchangedToken>.Refresh) async throws(RequestError) -> ExchangedToken {
        // Only b64token characters (letters, digits, `-._~+/=`), which JSON writes as they are.
        guard HeaderFieldRules.checkBearer(signed) == .valid else { throw .signingFailed(reason: "the signed payload is not a compact JWT") }
        let body = Data(JSONWriter.object([("token", .string(signed))]).utf8)
        let request = OutgoingRequest(method: "POST", url: exchangeURL, headers: ["Content-Type": "application/json"], body: body)
        let response: ServerResponse
        do {
            response = try await transport.send(request)
        } catch {
            if Task.isCancelled || error is CancellationError { throw .cancelled }
            throw .exchangeFailed(reason: "the exchange request failed (\(Self.quoted(RequestError.summary(of: error), quotes: false)))", response: nil, underlyingError: error)
        }
        do {
            return try token(from: response)
        } catch {
            backOff(after: error.reason, refresh: refresh)
            throw .exchangeFailed(reason: error.reason, response: response, underlyingError: nil)
        }
    }

    /// Why the platform's answer is not used.
    struct UnusableAnswer: Error {
        let reason: String
    }

    /// The auth token in the platform's answer, read by `TokenEndpointAnswer` (size first, then
    /// status, `auth_token` and `expires_in`, 1 second to 1 day), and long enough lived to use.
    private func token(from response: ServerResponse) throws(UnusableAnswer) -> ExchangedToken {
        let answer: TokenEndpointAnswer
        do {
            answer = try TokenEndpointAnswer(response, from: "the platform", tokenField: "auth_token", limits: .init(
                maximumSize: Self.maximumAnswerSize, maximumTokenLength: Self.maximumAuthTokenLength, lifetimes: 1...Self.maximumLifetime))
        } catch {
            throw UnusableAnswer(reason: error.reason)
        }
        guard answer.lifetime > options.expiryLeeway else {
            throw UnusableAnswer(reason: "the platform's expires_in (\(answer.lifetime) s) is not longer than the expiry leeway (\(options.expiryLeeway) s), so the token would be stale on arrival; it is not used or stored")
        }
        return ExchangedToken(credential: StoredCredential(token: answer.token, expiresAt: clock.now().addingTimeInterval(answer.lifetime)),
                              monotonicExpiry: clock.monotonicNow() + answer.lifetime)
    }

    /// Remembers a refused or unusable answer: nothing is exchanged for the next 1, 2, 4, … seconds
    /// (at most ``maximumExchangeBackoff``). Only while `flight`'s generation is current: a refusal
    /// that a switch or a logout overtook does not hold back the next user.
    private func backOff(after reason: String, refresh: CredentialRefresher<ExchangedToken>.Refresh) {
        let now = clock.monotonicNow()
        refresh.whileCurrent {
            backoff.withLock { backoff in
                backoff.refusals += 1
                let doublings = Double(min(backoff.refusals - 1, 30))
                let delay = min(Self.firstExchangeBackoff * pow(2, doublings), Self.maximumExchangeBackoff)
                backoff.until = now + delay
                backoff.reason = reason
            }
        }
    }

    /// The error a request gets while the platform's last refusal holds exchanges back; `nil` when
    /// an exchange may be tried.
    private func backoffError() -> RequestError? {
        let now = clock.monotonicNow()
        guard let (refusals, remaining, reason) = backoff.withLock({ backoff -> (Int, TimeInterval, String)? in
            backoff.until > now ? (backoff.refusals, backoff.until - now, backoff.reason) : nil
        }) else { return nil }
        let seconds = remaining.rounded(.up)
        let formatted = seconds < 1e15 ? String(Int(seconds)) : String(seconds)
        return .exchangeFailed(reason: "the platform refused the last \(refusals == 1 ? "exchange" : "\(refusals) exchanges in a row") (\(reason)), so none is tried for \(formatted) s more", response: nil, underlyingError: nil)
    }

    /// The slot of the provider exchanging at `url`: `CredentialKind/tokenExchange` scoped to its
    /// scheme, host, port and path (no user info, query or fragment, which never name another platform).
    static func credentialKind(for url: URL) -> CredentialKind {
        var components = URLComponents()
        components.scheme = url.scheme?.lowercased()
        components.host = url.host?.lowercased()
        components.port = url.port
        components.path = url.path
        return .tokenExchange.scoped(to: components.string ?? url.absoluteString)
    }

    /// The longest `expires_in` taken (one day), and the longest a stored token is trusted for.
    static let maximumLifetime: TimeInterval = 86_400

    /// Text from the platform or the signer, made safe for an error message: at most 200
    /// characters, with control characters, bidirectional overrides and other non-ASCII escaped.
    static func quoted(_ text: String, quotes: Bool = true) -> String {
        quotes ? LogText.escaped(text, limit: 200) : LogText.plain(text, limit: 200)
    }
}

extension TokenExchangeProvider.ExchangedToken {
    /// Usable while more than `leeway` seconds are left on both clocks.
    func isFresh(on clock: any AuthorizationClock, leeway: TimeInterval) -> Bool {
        guard let expiresAt = credential.expiresAt, expiresAt.timeIntervalSince(clock.now()) > leeway else { return false }
        return monotonicExpiry - clock.monotonicNow() > leeway
    }
}

/// The payload-signing and token-exchange mode (`SDKAuthorization.TokenExchange`): a
/// ``TokenExchangeProvider`` exchanging at the configuration's `tokenExchangeURL` through the
/// client's transport, with the default options and the auth token kept in memory only. Register
/// it with the app's signer, so the provider signs from the first request:
///
/// ```swift
/// registry.register(TokenExchangeMode(signer: .async { payload in try await server.sign(payload) }))
/// ```
public struct TokenExchangeMode: NamedProviderFactory {
    /// `SDKAuthorization.TokenExchange`.
    public static let providerName = "SDKAuthorization.TokenExchange"

    /// `tokenExchangeURL`, required: `https` (`http` on a loopback host only), a host, no user
    /// info, query or fragment.
    public static let settingKeys = [
        ModeSettingKey.secureEndpoint("tokenExchangeURL", purpose: "Where signed payloads are exchanged"),
    ]

    private let signer: PayloadSigner
    private let store: (any CredentialStore)?
    private let identity: String?

    /// The mode whose providers sign with `signer`.
    ///
    /// - Parameters:
    ///   - signer: Signs the payloads.
    ///   - store: Where the auth token is kept across launches (``TokenExchangeProvider``'s `store`);
    ///     `nil`, the default, keeps it in memory only.
    ///   - identity: The user the kept token belongs to (`identity`).
    public init(signer: PayloadSigner, store: (any CredentialStore)? = nil, identity: String? = nil) {
        self.signer = signer
        self.store = store
        self.identity = identity
    }

    /// A new ``TokenExchangeProvider`` for the configuration's `tokenExchangeURL`.
    public func makeProvider(for context: ProviderFactoryContext) throws -> any AuthorizationProvider {
        guard let exchangeURL = context.modeSettings.url("tokenExchangeURL") else { throw ConfigurationError.missingKey("tokenExchangeURL") }
        return try TokenExchangeProvider(
            exchangeURL: exchangeURL,
            signer: signer,
            identity: identity,
            store: store,
            transport: context.transport ?? URLSessionHTTPTransport(),
            clock: context.clock,
            diagnostics: context.diagnostics
        )
    }
}
