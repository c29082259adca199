import Foundation
import SDKAuthorizationTesting
import EngagementTestSupport
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationModeKit
@testable import SDKAuthorizationEngagement

@Suite("Opt-in customer-token cache", .hangLimit)
struct CachingAuthorizationProviderTests {
    private let context = AuthorizationContext(endpoint: .appInboxFetch, url: URL(string: "https://a.example/x")!)

    @Test func tokenIsReusedUntilExpiryMinusLeeway() async throws {
        let clock = ManualClock()
        let now = clock.now().timeIntervalSince1970
        let first = makeJWT(["sub": "u1", "exp": now + 120])
        let second = makeJWT(["sub": "u1", "exp": now + 3600])
        let inner = ScriptedProvider(.token(first), .token(second))
        let cache = CachingAuthorizationProvider(wrapping: inner, leeway: 60, clock: clock)

        #expect(try await cache.credential(for: context) == .bearer(first))
        #expect(try await cache.credential(for: context) == .bearer(first))
        clock.advance(by: 60) // exactly 60 s before exp: not yet stale
        #expect(try await cache.credential(for: context) == .bearer(first))
        clock.advance(by: 0.001) // less than 60 s before exp: stale
        #expect(try await cache.credential(for: context) == .bearer(second))
        #expect(inner.requestedContexts.count == 2)
    }

    @Test func tokenWithoutExpiryIsNeverCached() async throws {
        let inner = ScriptedProvider(.token(makeJWT(["sub": "u1"])), .token("opaque-token"))
        let cache = CachingAuthorizationProvider(wrapping: inner, leeway: 60, clock: ManualClock())
        _ = try await cache.credential(for: context)
        _ = try await cache.credential(for: context)
        _ = try await cache.credential(for: context)
        #expect(inner.requestedContexts.count == 3)
    }

    @Test func identityChangeAndRejectionDropTheCache() async throws {
        let clock = ManualClock()
        let token = makeJWT(["exp": clock.now().timeIntervalSince1970 + 3600])
        let inner = ScriptedProvider(.token(token))
        let cache = CachingAuthorizationProvider(wrapping: inner, leeway: 60, clock: clock)
        _ = try await cache.credential(for: context)
        await cache.identityDidChange()
        _ = try await cache.credential(for: context)
        _ = await cache.credentialRejected(.bearer(token), response: ServerResponse(statusCode: 401), context: context)
        _ = try await cache.credential(for: context)
        #expect(inner.requestedContexts.count == 3)
        #expect(inner.identityChangeCount == 1)
        #expect(inner.rejectedCredentials == [token])
    }

    @Test func configurationTurnsTheCacheOnForAProviderClass() async throws {
        final class HourTokenAuthProvider: NSObject, AuthorizationProviderType {
            static let calls = Locked(0)
            required override init() {}
            func getAuthorizationToken() -> String? {
                Self.calls.withLock { $0 += 1 }
                return makeJWT(["exp": ManualClock().now().timeIntervalSince1970 + 3600])
            }
        }
        let clock = ManualClock()
        let registry = ProviderRegistry()
        registry.register(HourTokenAuthProvider.self, as: "ExponeaAuthProvider")
        let transport = RecordingTransport()
        let client = try AuthorizedHTTPClient(
            configuration: engagementConfiguration(advancedAuthEnabled: true, caching: .honoringExpiry(leeway: 60)),
            registry: registry,
            transport: transport,
            diagnostics: RecordingDiagnosticsSink(),
            clock: clock
        )
        for _ in 0..<5 { _ = try await client.send(.appInboxFetch) }
        #expect(HourTokenAuthProvider.calls.withLock { $0 } == 1)
        #expect(transport.requests.count == 5)
    }
}
