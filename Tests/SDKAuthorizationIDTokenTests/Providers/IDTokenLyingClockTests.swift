import Foundation
import SDKAuthorizationTesting
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationModeKit
@testable import SDKAuthorizationIDToken

/// The ID-token mode judges a token's freshness as `RefreshingTokenProvider` does: a device clock
/// that is off by minutes never makes a refreshed token stale or expired on arrival.
@Suite("Clocks that lie: IDTokenStore judges freshness with the token's own clock", .hangLimit)
struct IDTokenLyingClockTests {
    let clock = ManualClock()
    let sink = RecordingDiagnosticsSink()
    let url = URL(string: "https://api.rover.io/graphql")!

    /// A server `deviceAhead` seconds behind the device's clock that issues 10-minute ID tokens and
    /// accepts one until its `exp` on its own clock.
    func server(deviceAhead: TimeInterval) -> (issue: @Sendable () -> String, answer: @Sendable (OutgoingRequest) -> ServerResponse, issued: Counter, refused: Counter) {
        let issued = Counter(), refused = Counter(), clock = clock
        let now = { @Sendable in clock.now().timeIntervalSince1970 - deviceAhead }
        return (
            { makeJWT(["sub": "user", "n": issued.increment(), "iat": now(), "exp": now() + 600]) },
            { request in
                let bearer = request.value(forHeader: "Authorization").map { String($0.dropFirst("Bearer ".count)) } ?? ""
                guard let exp = (try? JWTClaims(decoding: bearer))?.expiresAt, exp.timeIntervalSince1970 > now() else {
                    _ = refused.increment()
                    return ServerResponse(statusCode: 401)
                }
                return ServerResponse(statusCode: 200)
            },
            issued, refused
        )
    }

    func client(_ provider: any AuthorizationProvider, transport: RecordingTransport) throws -> AuthorizedHTTPClient {
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(host: "api.rover.io", scheme: .bearer))
        let authorizer = try RequestAuthorizer(policy: policy, providers: [.bearer: provider],
                                               options: AuthorizationOptions(refreshWindow: AuthorizationOptions.RefreshWindow(), requestDeadline: 60), clock: clock, diagnostics: sink)
        return AuthorizedHTTPClient(authorizer: authorizer, transport: transport)
    }

    @Test(arguments: [900, 570, -900] as [TimeInterval])
    func aDeviceClockMinutesOffNeitherFailsNorStormsTenMinuteIDTokens(deviceAhead: TimeInterval) async throws {
        let server = server(deviceAhead: deviceAhead)
        let idTokens = try IDTokenStore(authorizedDomains: ["api.rover.io"], clock: clock, diagnostics: sink)
        idTokens.registerTokenRefresh { server.issue() }
        let client = try client(idTokens, transport: RecordingTransport { server.answer($0) })
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
        #expect(codes.allSatisfy { $0 == nil }, "\(codes)")
        #expect(server.issued.current == 2, "one token at the start, the next when 9 of its 10 minutes are gone")
        #expect(server.refused.current == 0)
    }

    @Test func aTokenSetByTheAppWhileTheDeviceClockIsFifteenMinutesAheadIsUsedNotRefreshed() async throws {
        let server = server(deviceAhead: 900)
        let idTokens = try IDTokenStore(authorizedDomains: ["api.rover.io"], clock: clock, diagnostics: sink)
        let refreshes = Counter()
        idTokens.registerTokenRefresh { _ = refreshes.increment(); return server.issue() }
        let token = server.issue()
        try idTokens.setIDToken(token)
        let context = AuthorizationContext(endpoint: "graphql", url: url)
        #expect(try await idTokens.credential(for: context) == .bearer(token))
        #expect(refreshes.current == 0)
        #expect(!sink.messages(at: .warning).contains { $0.contains("expires within") }, "not reported as stale on arrival")
        // Its 10 minutes count from its arrival: fresh until 60 s (the leeway) before their end.
        clock.advance(by: 540)
        #expect(try await idTokens.credential(for: context) == .bearer(token))
        clock.advance(by: 1)
        #expect(try await idTokens.credential(for: context) != .bearer(token))
        #expect(refreshes.current == 1)
    }
}
