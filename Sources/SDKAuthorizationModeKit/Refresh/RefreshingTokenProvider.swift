import Foundation
import SDKAuthorization

/// A token that your code refreshes, shared by every request: refresh once, let the others wait.
///
/// The general provider for any API whose requests carry a token that expires: give it the
/// function that fetches a new token, and put it in a rule.
///
/// ```swift
/// // auth.refreshAccessToken() returns the new token, a String (or a Token, with its expiry).
/// let tokens = try RefreshingTokenProvider { try await auth.refreshAccessToken() }
/// var policy = AuthorizationPolicy()
/// try policy.add(AuthorizationRule(host: "api.example.com", scheme: .bearer))
/// let authorizer = try RequestAuthorizer(policy: policy, providers: [.bearer: tokens])
/// ```
///
/// - A request that finds no fresh token (none yet, `exp` less than ``Options/expiryLeeway``
///   away, or rejected by the server) waits for a refresh.
/// - A clock that lies causes no refresh storm: when the device's clock disagrees with a JWT as it
///   arrives (already stale by its `exp`, or issued more than a minute in the future by its
///   `iat`), the token's lifetime, `exp - iat`, is counted on the monotonic clock from its
///   arrival instead of reading `exp` on the wall clock. A device clock 15 minutes fast with
///   10-minute tokens refreshes once every 9 minutes; at worst a token is used until the server
///   refuses it. A token without both claims (or with an ``Token/expiresAt`` of your own) is
///   judged on the wall clock. Any number of concurrent requests share
///   **one** call to `refresh`, and resume with its token in the order they began waiting.
/// - Each request waits until the token comes, the refresh fails (the request fails with
///   `RequestError.Code.refreshFailed`), its `RequestDeadline` passes, or it is cancelled. A
///   refresh whose requests have all left is cancelled; the next request starts a new one.
/// - A refresh that takes longer than ``Options/refreshTimeout`` fails its requests with
///   `RequestError.Code.credentialTimedOut`: a request is never sent without its token unless
///   ``Options/sendsWithoutTokenOnTimeout`` says so.
/// - A 401 to a request that carried the current token marks it stale and asks for one retry, which
///   waits for the refresh; 50 requests rejected with one stale token cause one refresh. A server
///   that answers an expired token with 403 says so in ``Options/rejectionStatuses``. When that
///   refresh fails, the request's error carries the server's 401 (`WWW-Authenticate` and all) as
///   its `RequestError.response`.
/// - With ``Options/sendsOnlyWhenChallenged``, each request goes without the token first, and
///   with it only on the retry after a 401 that challenges for it (`WWW-Authenticate`), as Ktor's
///   `sendWithoutRequest = false` does; a 401 without a challenge fails the request.
/// - The refresh function may be told why it is asked (no token, expiring, rejected with the
///   server's answer) and which token it replaces: ``init(token:options:clock:diagnostics:refreshing:)``.
/// - A refresh function that fetches its token through the client it refreshes for, to an endpoint
///   under this provider's rule, never waits for itself: that request fails at once with
///   `RequestError.Code.refreshWaitsForItself`. Give the token endpoint a rule with scheme
///   `AuthorizationScheme.none`.
/// - One refresh at a time: a refresh whose requests have all left but that ignores cancellation
///   still counts as running until it returns, and the requests that come meanwhile wait for it
///   (each until its deadline) instead of starting another; once it has run past
///   ``Options/refreshTimeout`` they fail at once as timed out. Its token, when it comes, is used.
///   ``setToken(_:)`` and ``clearToken()`` end that wait.
/// - Every refresh counts against the authorizer's `AuthorizationOptions.RefreshWindow`, whatever started it (no token
///   yet, expiry, a rejection), and against the provider's own count of the same window, so one
///   provider shared by several clients still refreshes no more than one window allows; once the
///   window is used up, the requests that need one fail with
///   `RequestError.Code.refreshWindowExceeded`. A refresh that returns a token already expired
///   fails its requests with `RequestError.Code.refreshedCredentialExpired`.
/// - ``clearToken()`` (logout) fails the waiting requests with
///   `RequestError.Code.credentialCleared`, and a refresh that returns after it is dropped. A
///   request sent before it and rejected after it fails as cleared too: nothing is refreshed for
///   it, and it is never sent again with a token fetched after the logout, even behind a decorator
///   of the app's that forwards only `credential(for:)` and `credentialRejected`: the provider notes
///   on each request the generation its token was issued in
///   (`AuthorizationContext.noteIssued(by:generation:)`), and refuses a rejection of a token it
///   issued before the last logout (one it is shown outside a request, too).
public final class RefreshingTokenProvider: AuthorizationProvider, Sendable, CustomStringConvertible, CustomReflectable {
    /// A token and when it expires. Its `description`, `debugDescription` and `dump` never show
    /// the token itself.
    public struct Token: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
        /// The token itself.
        public var value: String
        /// When it expires (wall-clock time); `nil` reads the JWT's `exp`, if it is a JWT. A token
        /// with neither never goes stale until the server rejects it.
        public var expiresAt: Date?

        /// Creates a token.
        public init(_ value: String, expiresAt: Date? = nil) {
            self.value = value
            self.expiresAt = expiresAt ?? (try? JWTClaims(decoding: value).expiresAt)
        }

        public var description: String {
            "Token \(Redaction.redact(value))\(expiresAt.map { ", expires \($0.ISO8601Format())" } ?? "")"
        }

        public var debugDescription: String { description }

        public var customMirror: Mirror { Mirror(self, children: ["token": description], displayStyle: .struct) }
    }

    /// Why a refresh is asked for, and the token it replaces: what the refresh function given to
    /// ``init(token:options:clock:diagnostics:refreshing:)`` receives (a refresh token kept beside
    /// the access token, say, or an API that wants the old token to issue the next).
    public struct RefreshRequest: Sendable, CustomStringConvertible {
        /// Why the refresh is asked for.
        public enum Reason: String, Sendable, Equatable {
            /// There is no token (none given at start, or after ``RefreshingTokenProvider/clearToken()``).
            case noToken
            /// The token expires within ``Options/expiryLeeway`` (or has expired).
            case expiring
            /// The server rejected the token (a status of ``Options/rejectionStatuses``).
            case rejected
        }

        /// Why the refresh is asked for.
        public let reason: Reason
        /// The token the refresh replaces; `nil` for ``Reason/noToken``.
        public let replacing: Token?
        /// The server's answer that rejected it, for ``Reason/rejected`` (its status, header fields
        /// such as `WWW-Authenticate`, and body).
        public let rejection: ServerResponse?

        /// Never the token itself.
        public var description: String {
            "RefreshRequest(\(reason.rawValue)\(replacing.map { ", replacing \($0)" } ?? "")\(rejection.map { ", HTTP \($0.statusCode)" } ?? ""))"
        }
    }

    /// Time limits.
    public struct Options: Sendable, Equatable {
        /// Seconds a refresh may take (default 10, at most 600).
        public var refreshTimeout: TimeInterval
        /// A token whose expiry is less than this many seconds away is refreshed before use
        /// (default 60, at most 86400).
        public var expiryLeeway: TimeInterval
        /// Send the requests without a token when a refresh times out, instead of failing them
        /// (default false).
        public var sendsWithoutTokenOnTimeout: Bool
        /// The header that carries the token: `nil` (the default) for `Authorization: Bearer <token>`,
        /// or a header name of your API's (`X-Session-Token`) that carries the token as it is (not
        /// `Idempotency-Key`, the request queue's idempotency header).
        public var headerName: String?
        /// The statuses that mean "this token is no longer good": a request rejected with one of
        /// them marks the token stale and is retried once with a refreshed one. `[401]` by default;
        /// `[401, 403]` for a server that answers an expired token with 403. A rejection with
        /// another status fails the request (`RequestError.Code.authorizationRejected`).
        public var rejectionStatuses: Set<Int>
        /// Send each request without the token first, and with it only on the retry after the
        /// server's rejection challenges for it (`WWW-Authenticate`): Ktor's
        /// `sendWithoutRequest = false`, for a server that answers some requests without one.
        /// Default `false`: the token goes on every request.
        public var sendsOnlyWhenChallenged: Bool

        /// Creates options.
        public init(refreshTimeout: TimeInterval = 10, expiryLeeway: TimeInterval = 60, sendsWithoutTokenOnTimeout: Bool = false,
                    headerName: String? = nil, rejectionStatuses: Set<Int> = [401], sendsOnlyWhenChallenged: Bool = false) {
            self.refreshTimeout = refreshTimeout
            self.expiryLeeway = expiryLeeway
            self.sendsWithoutTokenOnTimeout = sendsWithoutTokenOnTimeout
            self.headerName = headerName
            self.rejectionStatuses = rejectionStatuses
            self.sendsOnlyWhenChallenged = sendsOnlyWhenChallenged
        }
    }

    struct State: Sendable {
        let token: Token
        /// When it goes stale on this device's clocks (``TokenExpiry``), judged as it arrived.
        let expiry: TokenExpiry
    }

    /// The options in force.
    public let options: Options
    private let fetch: @Sendable (RefreshRequest) async throws -> Token
    private let clock: any AuthorizationClock
    private let diagnostics: any DiagnosticsSink
    /// The token, the one refresh that runs, and the requests that wait for it.
    let refresher: CredentialRefresher<State>

    /// Creates the provider.
    ///
    /// - Parameters:
    ///   - token: The token to start with (after a login, say); `nil` refreshes on the first request.
    ///   - options: Time limits and the header.
    ///   - clock: Wall-clock time for expiry, monotonic time for the time limits.
    ///   - diagnostics: Where refresh failures and timeouts are reported.
    ///   - refresh: Fetches a new token. Called once for any number of waiting requests; may throw.
    /// - Throws: `ConfigurationError` for options out of range, a header name that is not an HTTP
    ///   token, or a starting token that cannot be sent.
    public convenience init(
        token: Token? = nil,
        options: Options = Options(),
        clock: any AuthorizationClock = SystemClock(),
        diagnostics: any DiagnosticsSink = StandardErrorDiagnosticsSink.inDebugBuilds,
        refresh: @escaping @Sendable () async throws -> Token
    ) throws(ConfigurationError) {
        try self.init(token: token, options: options, clock: clock, diagnostics: diagnostics, refreshing: { _ in try await refresh() })
    }

    /// Creates the provider with a refresh function that is told why it is asked and which token
    /// it replaces (Ktor's `refreshTokens` gets the old tokens the same way):
    ///
    /// ```swift
    /// let tokens = try RefreshingTokenProvider(options: .init(rejectionStatuses: [401, 403])) { request in
    ///     // request.reason: .noToken, .expiring or .rejected; request.rejection: the server's answer
    ///     try await auth.refreshAccessToken(after: request.replacing?.value)
    /// }
    /// ```
    ///
    /// The parameters and errors are those of the initializer that takes `refresh`;
    /// also `ConfigurationError` for ``Options/rejectionStatuses`` empty or naming a status other
    /// than 401 and 403 (the only answers a provider is asked about).
    public init(
        token: Token? = nil,
        options: Options = Options(),
        clock: any AuthorizationClock = SystemClock(),
        diagnostics: any DiagnosticsSink = StandardErrorDiagnosticsSink.inDebugBuilds,
        refreshing refresh: @escaping @Sendable (RefreshRequest) async throws -> Token
    ) throws(ConfigurationError) {
        guard !options.rejectionStatuses.isEmpty, options.rejectionStatuses.isSubset(of: [401, 403]) else {
            throw .invalidValue(key: "rejectionStatuses", reason: "must be 401, 403 or both: a provider is asked only about those answers (\(options.rejectionStatuses.isEmpty ? "none" : options.rejectionStatuses.sorted().prefix(8).map(String.init).joined(separator: ", ")) given)")
        }
        guard options.refreshTimeout.isFinite, options.refreshTimeout > 0, options.refreshTimeout <= 600 else {
            throw .invalidValue(key: "refreshTimeout", reason: "must be more than 0 and at most 600 seconds")
        }
        guard options.expiryLeeway.isFinite, (0...AuthorizationOptions.maximumSeconds).contains(options.expiryLeeway) else {
            throw .invalidValue(key: "expiryLeeway", reason: "must be from 0 to 86400 seconds")
        }
        if let name = options.headerName, !HeaderFieldRules.isValidName(name) || HeaderFieldRules.isTransportOwnedName(name) {
            throw .invalidValue(key: "headerName", reason: "\(String(name.prefix(64)).debugDescription) is not a header name a credential may use")
        }
        if let name = options.headerName, name.lowercased() == "idempotency-key" {
            throw .invalidValue(key: "headerName", reason: "must not be Idempotency-Key: that header carries a request's idempotency key, not a credential")
        }
        if let token { try Self.check(token) }
        self.options = options
        self.fetch = refresh
        self.clock = clock
        self.diagnostics = diagnostics
        let leeway = options.expiryLeeway, headerName = options.headerName
        self.refresher = try CredentialRefresher(
            value: token.map { State(token: $0, expiry: TokenExpiry(token: $0.value, expiresAt: $0.expiresAt, leeway: leeway, clock: clock)) },
            options: .init(timeout: options.refreshTimeout, rejectionStatuses: options.rejectionStatuses, failures: .refreshFailed,
                           sendsOnlyWhenChallenged: options.sendsOnlyWhenChallenged),
            clock: clock, diagnostics: diagnostics,
            // model: expiry
            isFresh: { !$0.expiry.isStale(on: clock, leeway: leeway) },
            credential: { state in headerName.map { .header($0, value: state.token.value) } ?? .bearer(state.token.value) })
    }

    /// Creates the provider from a refresh that returns the token alone: its expiry is read from
    /// the JWT's `exp`, if it is a JWT (as ``Token/init(_:expiresAt:)`` reads it).
    ///
    /// ```swift
    /// let tokens = try RefreshingTokenProvider { try await auth.refreshAccessToken() }   // returns a String
    /// ```
    ///
    /// The parameters and errors are those of the initializer whose `refresh` returns a ``Token``.
    /// (Disfavoured, so a closure that could be either, one that only throws, stays the ``Token`` one.)
    @_disfavoredOverload
    public convenience init(
        token: Token? = nil,
        options: Options = Options(),
        clock: any AuthorizationClock = SystemClock(),
        diagnostics: any DiagnosticsSink = StandardErrorDiagnosticsSink.inDebugBuilds,
        refresh: @escaping @Sendable () async throws -> String
    ) throws(ConfigurationError) {
        try self.init(token: token, options: options, clock: clock, diagnostics: diagnostics, refresh: { Token(try await refresh()) })
    }

    public var description: String {
        "RefreshingTokenProvider(token: \(refresher.current == nil ? "none" : "set, redacted"), waiting: \(refresher.waitingCount))"
    }

    public var customMirror: Mirror { Mirror(self, children: ["description": description, "options": options], displayStyle: .class) }

    /// Sets the token (after a login, say) and resumes every waiting request with it.
    ///
    /// - Throws: `ConfigurationError` for an empty token or one a header cannot carry; the current
    ///   token is then kept.
    public func setToken(_ token: Token) throws(ConfigurationError) {
        try Self.check(token)
        refresher.set(state(token))
    }

    /// Forgets the token (logout): waiting requests fail with `RequestError.Code.credentialCleared`,
    /// and a refresh that returns after this is dropped.
    public func clearToken() {
        // model: logout (reset)
        refresher.clear()
    }

    private static func check(_ token: Token) throws(ConfigurationError) {
        try ConfigurationError.checkCredential(token.value, field: "token")
    }

    /// `token` as it arrives now.
    private func state(_ token: Token) -> State {
        State(token: token, expiry: TokenExpiry(token: token.value, expiresAt: token.expiresAt, leeway: options.expiryLeeway, clock: clock))
    }

    // MARK: AuthorizationProvider

    public func credential(for context: AuthorizationContext) async throws -> Credential {
        do {
            return try await refresher.credential(for: context, fetch: fetchToken)
        } catch let error as RequestError where error.code == .credentialTimedOut {
            guard options.sendsWithoutTokenOnTimeout else {
                diagnostics.log(.warning, "The token refresh did not finish within \(options.refreshTimeout) seconds; failing \(context.requestName)",
                                endpoint: context.endpoint, scheme: context.scheme, event: RequestError.Code.credentialTimedOut.rawValue)
                throw error
            }
            diagnostics.log(.warning, "The token refresh did not finish within \(options.refreshTimeout) seconds; sending \(context.requestName) without a token",
                            endpoint: context.endpoint, scheme: context.scheme, event: RequestError.Code.credentialTimedOut.rawValue)
            return .omitted
        }
    }

    /// The app's refresh, told why it is asked; its token checked as it arrives.
    private func fetchToken(_ refresh: CredentialRefresher<State>.Refresh) async throws -> State {
        let reason: RefreshRequest.Reason = switch refresh.reason {
        case .noCredential: .noToken
        case .expiring: .expiring
        case .rejected: .rejected
        }
        let token = try await fetch(RefreshRequest(reason: reason, replacing: refresh.replacing?.token, rejection: refresh.rejection))
        try Self.check(token)
        let arrived = state(token)
        // Installing it would only make the next request refresh again, in a loop.
        if let remaining = arrived.expiry.remaining(on: clock), remaining <= 0 { throw RequestError.refreshedCredentialExpired(endpoint: nil) }
        return arrived
    }

    /// A 401 (or a status of ``Options/rejectionStatuses``) to a request that carried the current
    /// token marks it stale and asks for one retry. A rejection of a token it handed out before the
    /// last ``clearToken()`` or identity change asks for none, and refreshes nothing.
    public func credentialRejected(_ credential: Credential, response: ServerResponse, context: AuthorizationContext) async -> RejectionDecision {
        refresher.rejected(credential, response: response)
    }

    /// The user changed: as ``clearToken()``.
    public func identityDidChange() async {
        clearToken()
    }

    /// `true`: every wait ends by the request's deadline or at cancellation.
    public var endsByDeadline: Bool { true }
}
