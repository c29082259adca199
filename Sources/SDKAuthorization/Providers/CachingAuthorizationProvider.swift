import Foundation

/// An opt-in cache in front of another provider that reuses a token until its JWT `exp` is less
/// than `leeway` away, and never longer than `maximumAge` (default one hour), however far away
/// `exp` is: a token that claims a century is still asked for again within the hour.
///
/// Concurrent requests that find no usable token share one call to the wrapped provider. A token
/// without a readable `exp` is used for the request that got it and not cached. The cache is
/// dropped when the server rejects the cached token and on identity change.
///
/// Turn it on with ``CustomerTokenCaching/honoringExpiry(leeway:maximumAge:)`` in the configuration.
public actor CachingAuthorizationProvider: AuthorizationProvider, CustomReflectable {
    private let wrapped: any AuthorizationProvider
    private let leeway: TimeInterval
    /// The default ``init(wrapping:leeway:maximumAge:clock:)`` maximum age: one hour.
    public static let defaultMaximumAge: TimeInterval = 3_600

    private let clock: any AuthorizationClock
    private let maximumAge: TimeInterval
    /// The cached credential, its JWT expiry (wall clock) and when it was cached (monotonic).
    private var cached: (credential: Credential, expiresAt: Date, cachedAt: TimeInterval)?
    private var inFlight: Task<Credential, any Error>?
    private var generation = 0

    /// Wraps `provider`.
    ///
    /// - Parameters:
    ///   - provider: The provider asked when no usable token is cached.
    ///   - leeway: A token is not reused once its `exp` is less than this many seconds away.
    ///   - maximumAge: A token is not reused this many seconds after it was cached (monotonic clock).
    ///   - clock: Wall-clock time for `exp`, monotonic time for the age.
    public init(wrapping provider: any AuthorizationProvider, leeway: TimeInterval = 60, maximumAge: TimeInterval = defaultMaximumAge,
                clock: any AuthorizationClock = SystemClock()) {
        wrapped = provider
        self.leeway = leeway
        self.maximumAge = maximumAge
        self.clock = clock
    }

    public func credential(for context: AuthorizationContext) async throws -> Credential {
        if let cached, cached.expiresAt.timeIntervalSince(clock.now()) >= leeway, clock.monotonicNow() - cached.cachedAt < maximumAge {
            return cached.credential
        }
        cached = nil
        if let inFlight { return try await inFlight.value }
        let wrapped = wrapped
        let task = Task { try await wrapped.credential(for: context) }
        inFlight = task
        let startedGeneration = generation
        defer { if generation == startedGeneration { inFlight = nil } }
        let credential = try await task.value
        if generation == startedGeneration, let token = credential.value,
           let expiresAt = try? JWTClaims(decoding: token).expiresAt,
           expiresAt.timeIntervalSince(clock.now()) >= leeway {
            cached = (credential, expiresAt, clock.monotonicNow())
        }
        return credential
    }

    public func credentialRejected(_ credential: Credential, response: ServerResponse, context: AuthorizationContext) async -> RejectionDecision {
        if cached?.credential == credential { cached = nil }
        return await wrapped.credentialRejected(credential, response: response, context: context)
    }

    public func identityDidChange() async {
        cached = nil
        inFlight = nil
        generation += 1
        await wrapped.identityDidChange()
    }

    /// Shows the settings, never a token.
    public nonisolated var customMirror: Mirror {
        Mirror(self, children: ["leeway": leeway, "maximumAge": maximumAge], displayStyle: .class)
    }
}
