import Foundation
import SDKAuthorizationTesting
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationModeKit

@Suite("Refresh once for everyone (RefreshingTokenProvider)", .hangLimit)
struct RefreshingTokenProviderTests {
    let clock = ManualClock()
    let sink = RecordingDiagnosticsSink()
    let context = AuthorizationContext(endpoint: "me", url: URL(string: "https://api.example.com/v1/me")!)

    func jwt(expiresIn seconds: TimeInterval, _ n: Int = 1) -> String {
        makeJWT(["sub": "user", "exp": clock.now().timeIntervalSince1970 + seconds, "n": n])
    }

    @Test func concurrentRequestsWithoutATokenShareOneRefreshAndResumeWithItsToken() async throws {
        let refreshes = Counter()
        let gate = AsyncGate()
        let token = jwt(expiresIn: 3_600)
        let provider = try RefreshingTokenProvider(clock: clock, diagnostics: sink) {
            _ = refreshes.increment()
            await gate.wait()
            return .init(token)
        }
        let tasks = (0..<100).map { _ in Task { [context] in try await provider.credential(for: context) } }
        await eventually("the refresh runs", { refreshes.current == 1 })
        gate.open()
        for task in tasks { #expect(try await task.value == .bearer(token)) }
        #expect(refreshes.current == 1)
        #expect(try await provider.credential(for: context) == .bearer(token))
        #expect(refreshes.current == 1)
    }

    @Test func aRefreshThatReturnsAStringIsTheTokenWithItsJWTsExpiry() async throws {
        // The README's form: a refresh returning the token alone, no Token wrapper.
        struct Auth: Sendable {
            let refreshes = Counter()
            let next: @Sendable (Int) -> String
            func refreshAccessToken() async throws -> String { next(refreshes.increment()) }
        }
        let auth = Auth(next: { [clock] n in makeJWT(["sub": "user", "exp": clock.now().timeIntervalSince1970 + 3_600, "n": n]) })
        let provider = try RefreshingTokenProvider(clock: clock, diagnostics: sink) { try await auth.refreshAccessToken() }
        let first = try await provider.credential(for: context)
        #expect(auth.refreshes.current == 1)
        #expect(try await provider.credential(for: context) == first)
        // The expiry came from the JWT's exp: within the minute's leeway it is refreshed before use.
        clock.advance(by: 3_600 - 59)
        let second = try await provider.credential(for: context)
        #expect(auth.refreshes.current == 2)
        #expect(second != first)
    }

    @Test func aTokenCloseToItsExpiryIsRefreshedBeforeUse() async throws {
        let refreshes = Counter()
        let provider = try RefreshingTokenProvider(token: .init(jwt(expiresIn: 30)), clock: clock, diagnostics: sink) { [clock] in
            _ = refreshes.increment()
            return .init("fresh", expiresAt: clock.now().addingTimeInterval(3_600))
        }
        #expect(try await provider.credential(for: context) == .bearer("fresh"))
        #expect(refreshes.current == 1)
    }

    @Test func aRefreshThatTimesOutFailsTheRequestsRatherThanSendingThemWithoutAToken() async throws {
        let provider = try RefreshingTokenProvider(options: .init(refreshTimeout: 10), clock: clock, diagnostics: sink) {
            try await Task.sleep(nanoseconds: 3_600_000_000_000)
            return .init("late")
        }
        let task = Task { [context] in try await provider.credential(for: context) }
        await eventually("waiting", { provider.description.contains("waiting: 1") })
        clock.advance(by: 10)
        await #expect(throws: RequestError.credentialTimedOut(endpoint: "me", after: 10)) { try await task.value }
        #expect(sink.messages(at: .warning).contains { $0.contains("did not finish within 10.0 seconds; failing") })
    }

    @Test func aRefreshThatTimesOutSendsWithoutATokenOnlyWhenConfiguredTo() async throws {
        let provider = try RefreshingTokenProvider(options: .init(refreshTimeout: 10, sendsWithoutTokenOnTimeout: true), clock: clock, diagnostics: sink) {
            try await Task.sleep(nanoseconds: 3_600_000_000_000)
            return .init("late")
        }
        let task = Task { [context] in try await provider.credential(for: context) }
        await eventually("waiting", { provider.description.contains("waiting: 1") })
        clock.advance(by: 10)
        #expect(try await task.value == .omitted)
    }

    @Test func aFailingRefreshFailsEveryWaiterWithItsError() async throws {
        struct Denied: Error {}
        let provider = try RefreshingTokenProvider(clock: clock, diagnostics: sink) { throw Denied() }
        do {
            _ = try await provider.credential(for: context)
            Issue.record("a failed refresh gave a credential")
        } catch let error as RequestError {
            #expect(error.code == .refreshFailed)
            #expect(error.underlyingError is Denied)
        }
    }

    @Test func aRejectedTokenIsRefreshedOnceForTheRetry() async throws {
        let provider = try RefreshingTokenProvider(token: .init("old-token"), clock: clock, diagnostics: sink) { .init("new-token") }
        let old = try await provider.credential(for: context)
        #expect(await provider.credentialRejected(old, response: ServerResponse(statusCode: 401), context: context) == .retry)
        #expect(try await provider.credential(for: context) == .bearer("new-token"))
        #expect(await provider.credentialRejected(.bearer("new-token"), response: ServerResponse(statusCode: 403), context: context) == .fail)
    }

    @Test func aLogoutDuringARefreshFailsTheWaitersAndDropsTheLateToken() async throws {
        let gate = AsyncGate()
        let provider = try RefreshingTokenProvider(clock: clock, diagnostics: sink) {
            await gate.wait()
            return .init("previous-users-token")
        }
        let task = Task { [context] in try await provider.credential(for: context) }
        await eventually("waiting", { provider.description.contains("waiting: 1") })
        provider.clearToken()
        await #expect(throws: RequestError.credentialCleared(endpoint: "me")) { try await task.value }
        gate.open()
        await eventually("dropped", { sink.messages(at: .info).contains { $0.contains("its token was dropped") } })
        #expect(provider.description.contains("token: none"))
    }

    @Test func theTokenGoesInTheHeaderTheOptionsName() async throws {
        let provider = try RefreshingTokenProvider(token: .init("session-1"), options: .init(headerName: "X-Session-Token"), clock: clock, diagnostics: sink) {
            .init("session-2")
        }
        #expect(try await provider.credential(for: context) == .header("X-Session-Token", value: "session-1"))
    }

    @Test func badOptionsAndTokensAreRefused() {
        let refresh: @Sendable () async throws -> RefreshingTokenProvider.Token = { .init("t") }
        for options in [RefreshingTokenProvider.Options(refreshTimeout: 0), .init(refreshTimeout: .nan), .init(refreshTimeout: 601),
                        .init(expiryLeeway: -1), .init(expiryLeeway: .infinity), .init(headerName: "Bad Name"), .init(headerName: ""), .init(headerName: "Content-Length")] {
            #expect(throws: ConfigurationError.self) { _ = try RefreshingTokenProvider(options: options, refresh: refresh) }
        }
        #expect(throws: ConfigurationError.self) { _ = try RefreshingTokenProvider(token: .init(""), refresh: refresh) }
        #expect(throws: ConfigurationError.self) { _ = try RefreshingTokenProvider(token: .init("a\r\nb"), refresh: refresh) }
    }

    @Test func itsDescriptionAndMirrorNeverShowTheToken() throws {
        let provider = try RefreshingTokenProvider(token: .init("top-secret-token"), refresh: { .init("t") })
        var dumped = ""
        dump(provider, to: &dumped)
        for text in [provider.description, String(reflecting: provider), dumped] { #expect(!text.contains("top-secret-token")) }
    }
}
