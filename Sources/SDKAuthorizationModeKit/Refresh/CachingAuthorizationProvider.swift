import Foundation
import SDKAuthorization

/// An opt-in cache in front of another provider that reuses a token until its JWT `exp` is less
/// than `leeway` away, and never longer than `maximumAge` (default one hour), however far away
/// `exp` is: a token that claims a century is still asked for again within the hour.
///
/// Concurrent requests that find no usable token share one call to the wrapped provider. Each
/// request waits for it until its own deadline or cancellation; a call whose requests have all
/// left is cancelled, and the next request asks anew, so a wrapped provider that hangs holds no
/// request past its deadline. A token without a readable `exp` is used for the requests that
/// waited for it and not reused. The cache is dropped when the server rejects the cached token
/// and on identity change; a call that returns after an identity change is not used, and a request
/// sent before an identity change and rejected after it fails with
/// `RequestError.Code.credentialCleared` without asking again, behind a decorator of the app's
/// too (it notes on each request the generation its token came from). A call whose requests have left but
/// that ignores cancellation still counts as running until it returns: the requests that come
/// meanwhile wait for it instead of starting a second one.
///
/// Turn it on with `CustomerTokenCaching.honoringExpiry(leeway:maximumAge:)` in the configuration.
public final class CachingAuthorizationProvider: AuthorizationProvider, Sendable, CustomReflectable {
    /// The default ``init(wrapping:leeway:maximumAge:clock:)`` maximum age: one hour.
    public static let defaultMaximumAge: TimeInterval = 3_600

    /// One answer of the wrapped provider: its JWT expiry (wall clock), and when it came (monotonic).
    struct Cached: Sendable {
        let credential: Credential
        let expiresAt: Date?
        let cachedAt: TimeInterval
    }

    private let wrapped: any AuthorizationProvider
    private let leeway: TimeInterval
    private let maximumAge: TimeInterval
    private let clock: any AuthorizationClock
    /// The cached answer, the one call that runs, and the requests that wait for it.
    let refresher: CredentialRefresher<Cached>

    /// Wraps `provider`.
    ///
    /// - Parameters:
    ///   - provider: The provider asked when no usable token is cached.
    ///   - leeway: A token is not reused once its `exp` is less than this many seconds away.
    ///   - maximumAge: A token is not reused this many seconds after it was cached (monotonic clock).
    ///   - clock: Wall-clock time for `exp`, monotonic time for the age and deadlines.
    public init(wrapping provider: any AuthorizationProvider, leeway: TimeInterval = 60, maximumAge: TimeInterval = defaultMaximumAge,
                clock: any AuthorizationClock = SystemClock()) {
        wrapped = provider
        self.leeway = leeway
        self.maximumAge = maximumAge
        self.clock = clock
        // The wrapped provider counts its own refreshes in the authorizer's window; any rejection
        // drops the cached token, and the wrapped provider decides what it means.
        refresher = CredentialRefresher(checked: .init(rejectionStatuses: [401, 403], countsInRefreshWindow: false), clock: clock,
                                        isFresh: { cached in
            // A cached token with a readable `exp` at least `leeway` away, cached less than `maximumAge` ago.
            guard let expiresAt = cached.expiresAt else { return false }
            return expiresAt.timeIntervalSince(clock.now()) >= leeway && clock.monotonicNow() - cached.cachedAt < maximumAge
        }, credential: \.credential)
    }

    public func credential(for context: AuthorizationContext) async throws -> Credential {
        // The shared call serves every waiter: it runs without this request's deadline, and is
        // cancelled once every waiter has left.
        // The wrapped provider counts its own refreshes in the authorizer's window.
        var shared = AuthorizationContext(request: context.request, endpoint: context.endpoint, scheme: context.scheme, attempt: context.attempt)
        shared.refreshWindow = context.refreshWindow
        // model: wait, start (-DCACHING: a flight without lifetime)
        return try await refresher.credential(for: context) { [wrapped, clock, shared] _ in
            let credential = try await wrapped.credential(for: shared)
            let expiresAt = credential.value.flatMap { try? JWTClaims(decoding: $0).expiresAt }
            return Cached(credential: credential, expiresAt: expiresAt, cachedAt: clock.monotonicNow())
        }
    }

    public func credentialRejected(_ credential: Credential, response: ServerResponse, context: AuthorizationContext) async -> RejectionDecision {
        // A rejection of a token cached before an identity change is refused here, whatever wraps the cache.
        guard refresher.rejected(credential, response: response) == .retry else { return .fail }
        return await wrapped.credentialRejected(credential, response: response, context: context)
    }

    public func identityDidChange() async {
        await identityDidChange(to: nil)
    }

    /// Forgets the cached credential and passes the new user on to the wrapped provider.
    public func identityDidChange(to identity: String?) async {
        refresher.clear()
        await wrapped.identityDidChange(to: identity)
    }

    /// Passed on to the wrapped provider, which issued the credential.
    public func credentialAccepted(_ credential: Credential, response: ServerResponse, context: AuthorizationContext) async {
        await wrapped.credentialAccepted(credential, response: response, context: context)
    }

    /// The wrapped provider's answer.
    public var inspectsAcceptedResponses: Bool { wrapped.inspectsAcceptedResponses }

    /// The wrapped provider's answer: a wait for the cached credential ends by the deadline, but a
    /// rejection is passed on to the wrapped provider as it is.
    public var endsByDeadline: Bool { wrapped.endsByDeadline }

    /// Shows the settings, never a token.
    public var customMirror: Mirror {
        Mirror(self, children: ["leeway": leeway, "maximumAge": maximumAge], displayStyle: .class)
    }
}
