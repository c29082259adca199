import Foundation

/// An opt-in cache in front of another provider that reuses a token until its JWT `exp` is less
/// than `leeway` away.
///
/// Concurrent requests that find no usable token share one call to the wrapped provider. A token
/// without a readable `exp` is used for the request that got it and not cached. The cache is
/// dropped when the server rejects the cached token and on identity change.
///
/// Turn it on with ``CustomerTokenCaching/honoringExpiry(leeway:)`` in the configuration.
public actor CachingAuthorizationProvider: AuthorizationProvider {
    private let wrapped: any AuthorizationProvider
    private let leeway: TimeInterval
    private let clock: any AuthorizationClock
    private var cached: (credential: Credential, expiresAt: Date)?
    private var inFlight: Task<Credential, any Error>?
    private var generation = 0

    /// Wraps `provider`.
    public init(wrapping provider: any AuthorizationProvider, leeway: TimeInterval = 60, clock: any AuthorizationClock = SystemClock()) {
        wrapped = provider
        self.leeway = leeway
        self.clock = clock
    }

    public func credential(for context: AuthorizationContext) async throws -> Credential {
        if let cached, cached.expiresAt.timeIntervalSince(clock.now()) >= leeway {
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
            cached = (credential, expiresAt)
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
}
