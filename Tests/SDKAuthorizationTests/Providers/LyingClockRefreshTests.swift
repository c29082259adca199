import Foundation
import SDKAuthorizationTesting
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationModeKit

/// A device clock that is off by minutes never makes a refreshed token stale or expired on arrival:
/// its freshness is judged with the skew the token's `iat` reveals, never with a refresh storm.
@Suite("Clocks that lie: RefreshingTokenProvider judges freshness with the token's own clock", .hangLimit)
struct LyingClockRefreshTests {
    let clock = ManualClock()
    let sink = RecordingDiagnosticsSink()
    let url = URL(string: "https://api.example.com/v1/me")!

    /// A server whose clock is `ahead` seconds behind the device's: it issues 10-minute tokens and
    /// accepts a token until its `exp` on its own clock.
    final class Server: Sendable {
        let clock: ManualClock
        let deviceAhead: TimeInterval
        let issued = Counter()
        let refused = Counter()

        init(clock: ManualClock, deviceAhead: TimeInterval) {
            self.clock = clock
            self.deviceAhead = deviceAhead
        }

        var now: TimeInterval { clock.now().timeIntervalSince1970 - deviceAhead }

        func issue(lifetime: TimeInterval = 600, issuedAgo: TimeInterval = 0) -> String {
            makeJWT(["sub": "user", "n": issued.increment(), "iat": now - issuedAgo, "exp": now - issuedAgo + lifetime])
        }

        func answer(_ request: OutgoingRequest) -> ServerResponse {
            let bearer = request.value(forHeader: "Authorization").map { String($0.dropFirst("Bearer ".count)) } ?? ""
            guard let exp = (try? JWTClaims(decoding: bearer))?.expiresAt, exp.timeIntervalSince1970 > now else {
                _ = refused.increment()
                return ServerResponse(statusCode: 401)
            }
            return ServerResponse(statusCode: 200)
        }
    }

    func client(_ provider: any AuthorizationProvider, transport: RecordingTransport) throws -> AuthorizedHTTPClient {
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(host: "api.example.com", scheme: .bearer))
        let authorizer = try RequestAuthorizer(policy: policy, providers: [.bearer: provider],
                                               options: AuthorizationOptions(refreshWindow: AuthorizationOptions.RefreshWindow(), requestDeadline: 60),
                                               clock: clock, diagnostics: sink)
        return AuthorizedHTTPClient(authorizer: authorizer, transport: transport)
    }

    /// Sends 12 requests, one a minute, and returns the error code of each (`nil`: it succeeded).
    func twelveRequestsOverTwelveMinutes(_ client: AuthorizedHTTPClient) async -> [RequestError.Code?] {
        var codes: [RequestError.Code?] = []
        for _ in 0..<12 {
            do throws(RequestError) {
                _ = try await client.send(OutgoingRequest(method: "GET", url: url))
                codes.append(nil)
            } catch {
                codes.append(error.code)
            }
            clock.advance(by: 60)
        }
        return codes
    }

    @Test(arguments: [900, 570, 61, -900] as [TimeInterval])
    func aDeviceClockMinutesOffNeitherFailsNorStormsTenMinuteTokens(deviceAhead: TimeInterval) async throws {
        let server = Server(clock: clock, deviceAhead: deviceAhead)
        let provider = try RefreshingTokenProvider(clock: clock, diagnostics: sink) { .init(server.issue()) }
        let codes = await twelveRequestsOverTwelveMinutes(try client(provider, transport: RecordingTransport { server.answer($0) }))
        #expect(codes.allSatisfy { $0 == nil }, "\(codes)")
        // One token at the start, the next when 9 of its 10 minutes are gone (the 60 s leeway).
        #expect(server.issued.current == 2)
        #expect(server.refused.current == 0, "no token was sent after its expiry on the server's clock")
    }

    @Test func aDeviceClockThatAgreesWithTheTokenWithinAMinuteIsStillReadAsItIs() async throws {
        // 59 seconds behind the token's iat: the wall clock is trusted, so exp on it counts.
        let server = Server(clock: clock, deviceAhead: -59)
        let provider = try RefreshingTokenProvider(clock: clock, diagnostics: sink) { .init(server.issue()) }
        _ = try await provider.credential(for: AuthorizationContext(endpoint: "me", url: url))
        // exp is 659 s away on the device's clock: fresh until 599 s.
        clock.advance(by: 598)
        _ = try await provider.credential(for: AuthorizationContext(endpoint: "me", url: url))
        #expect(server.issued.current == 1)
        clock.advance(by: 2)
        _ = try await provider.credential(for: AuthorizationContext(endpoint: "me", url: url))
        #expect(server.issued.current == 2)
    }

    @Test func aTokenWithALifetimeOfNothingIsStillRefusedAsAlreadyExpired() async throws {
        let server = Server(clock: clock, deviceAhead: 15 * 60)
        let provider = try RefreshingTokenProvider(clock: clock, diagnostics: sink) { .init(server.issue(lifetime: 0)) }
        await #expect(throws: RequestError.self) { try await provider.credential(for: AuthorizationContext(endpoint: "me", url: url)) }
        #expect(sink.messages(at: .warning).contains { $0.contains("already expired") })
    }

    @Test func aTokenIssuedLongAgoThatTheDeviceClockCallsExpiredIsUsedUntilTheServerRefusesItNotRefreshedInALoop() async throws {
        // An honest clock and a refresh that hands back a token issued 15 minutes ago (a cache): it
        // cannot be told from a fast clock, so it is used until the server refuses it; then the
        // refresh window bounds what follows.
        let server = Server(clock: clock, deviceAhead: 0)
        let provider = try RefreshingTokenProvider(clock: clock, diagnostics: sink) { .init(server.issue(issuedAgo: 15 * 60)) }
        let codes = await twelveRequestsOverTwelveMinutes(try client(provider, transport: RecordingTransport { server.answer($0) }))
        #expect(codes.allSatisfy { $0 == .authorizationRejected || $0 == .refreshWindowExceeded }, "\(codes)")
        #expect(server.issued.current <= 12 * 2, "one refresh per rejection at most, never a loop")
    }
}
