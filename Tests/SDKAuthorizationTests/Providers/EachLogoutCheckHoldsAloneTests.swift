import Foundation
import SDKAuthorizationTesting
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationModeKit

/// "A logout beats a 401 in flight" is checked in three places: when the rejection is evaluated,
/// when the retry is authorized, and by the provider serving the retry (the generation the retry's
/// context carries). Each test here stops only one of them, so turning any one off fails a test
/// even though the other two would also stop the request in the usual case. The refresh window
/// likewise bounds a refresh that an expiry starts, not only one a rejection asks for.
@Suite("Logout beats a rejection in flight at each of its three checks; an expiry's refresh is counted in the window", .hangLimit)
struct EachLogoutCheckHoldsAloneTests {
    let clock = ManualClock()
    let sink = RecordingDiagnosticsSink()
    let url = URL(string: "https://api.example.com/v1/me")!

    /// A generational provider an app wrote itself: it ignores the generation a retry's context
    /// carries (it serves whatever token it has now), so only the authorizer's checks protect it.
    final class AppGenerationalProvider: AuthorizationProvider, Credential.Issuer, Sendable {
        private let generation = Locked<UInt64>(0)
        let issued = Counter()
        let rejections = Counter()
        var credentialGeneration: UInt64 { generation.withLock { $0 } }
        var endsByDeadline: Bool { true }
        func logout() { generation.withLock { $0 += 1 } }
        func credential(for context: AuthorizationContext) async throws -> Credential {
            .bearer("token-\(issued.increment())")
        }
        func credentialRejected(_ credential: Credential, response: ServerResponse, context: AuthorizationContext) async -> RejectionDecision {
            _ = rejections.increment()
            return .retry
        }
    }

    func authorizer(_ provider: any AuthorizationProvider, window: AuthorizationOptions.RefreshWindow = AuthorizationOptions.RefreshWindow()) throws -> RequestAuthorizer {
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(host: "api.example.com", scheme: .bearer))
        return try RequestAuthorizer(policy: policy, providers: [.bearer: provider],
                                     options: AuthorizationOptions(refreshWindow: window, requestDeadline: 60), clock: clock, diagnostics: sink)
    }

    var request: OutgoingRequest { OutgoingRequest(method: "GET", url: url) }

    // MARK: The check when the rejection is evaluated

    @Test func aRejectionArrivingAfterALogoutFailsAsClearedWithoutTellingTheProvider() async throws {
        let provider = AppGenerationalProvider()
        let authorizer = try authorizer(provider)
        let sent = try await authorizer.authorize(request)
        provider.logout()
        let evaluation = await authorizer.evaluate(ServerResponse(statusCode: 401), to: sent)
        guard case .fail(let error) = evaluation else { Issue.record("a rejection after the logout was answered \(evaluation)"); return }
        #expect(error.code == .credentialCleared)
        #expect(error.response?.statusCode == 401, "the evaluation's own check answers, with the response it saw")
        #expect(provider.rejections.current == 0, "the provider is not told of a rejection after its logout")
        #expect(sink.messages(at: .info).contains { $0.contains("after a logout; it fails as cleared") })
    }

    // MARK: The check when the retry is authorized

    @Test func aRetryAuthorizedAfterALogoutIsRefusedBeforeTheProviderIsAskedAgain() async throws {
        let provider = AppGenerationalProvider()
        let authorizer = try authorizer(provider)
        let sent = try await authorizer.authorize(request)
        #expect(await authorizer.evaluate(ServerResponse(statusCode: 401), to: sent) == .retry, "no logout yet: the rejection is retried")
        // The logout lands between the evaluation and the retry: only the retry's own check is left,
        // and this provider would serve a token fetched after the logout.
        provider.logout()
        do throws(RequestError) {
            let retry = try await authorizer.authorize(retrying: sent)
            Issue.record("the retry was authorized after the logout with \(retry.request.value(forHeader: "Authorization") ?? "nothing")")
        } catch {
            #expect(error.code == .credentialCleared)
            #expect(error.wasSent)
        }
        #expect(provider.issued.current == 1, "no token was fetched for the retry after the logout")
    }

    @Test func anAppsOwnProviderThatIgnoresTheGenerationNeverSendsATokenFetchedAfterTheLogout() async throws {
        let provider = AppGenerationalProvider()
        let held = AsyncGate(), arrived = Counter()
        let api = RecordingTransport { _ in
            _ = arrived.increment()
            await held.wait()
            return ServerResponse(statusCode: 401)
        }
        let client = AuthorizedHTTPClient(authorizer: try authorizer(provider), transport: api)
        let request = Task { [request] () -> Result<ServerResponse, RequestError> in
            do throws(RequestError) { return .success(try await client.send(request)) } catch { return .failure(error) }
        }
        await eventually("the request reached the server", { arrived.current == 1 })
        provider.logout()
        held.open()
        guard case .failure(let error) = await request.value else { Issue.record("the request succeeded"); return }
        #expect(error.code == .credentialCleared)
        #expect(api.requests.map { $0.value(forHeader: "Authorization") } == ["Bearer token-1"])
        #expect(provider.issued.current == 1)
        #expect(provider.rejections.current == 0)
    }

    // MARK: The check by the provider serving the retry

    /// A retry's context as the authorizer makes it: carrying the generation `provider` issued in.
    func retryContext(issuedBy provider: any Credential.Issuer, generation: UInt64) -> AuthorizationContext {
        var context = AuthorizationContext(request: request, attempt: 2, deadline: RequestDeadline(seconds: 60, from: clock))
        context.issuedGeneration = IssuedGeneration(provider, generation: generation)
        return context
    }

    @Test func theRefreshingProviderServesARetryOnlyWhileTheGenerationItWasIssuedInIsCurrent() async throws {
        let refreshes = Counter()
        let provider = try RefreshingTokenProvider(token: .init("a0"), clock: clock, diagnostics: sink) { .init("a\(refreshes.increment())") }
        // The refresher keeps the generations, and is what the request notes as the issuer.
        let issuedIn = provider.refresher.credentialGeneration
        // The logout lands after the authorizer's checks passed, before the provider reads its state.
        provider.clearToken()
        await #expect(throws: RequestError.credentialCleared(endpoint: nil)) {
            try await provider.credential(for: retryContext(issuedBy: provider.refresher, generation: issuedIn))
        }
        #expect(refreshes.current == 0, "nothing is refreshed for a request issued before the logout")
        // A first try after the logout (no issued generation) is served as usual.
        #expect(try await provider.credential(for: AuthorizationContext(request: request, deadline: RequestDeadline(seconds: 60, from: clock))) == .bearer("a1"))
    }

    @Test func theCacheServesARetryOnlyWhileTheGenerationItWasIssuedInIsCurrent() async throws {
        let wrapped = ScriptedProvider(.token(makeJWT(["exp": clock.now().timeIntervalSince1970 + 3_600, "n": 0])), .token("after-logout"))
        let cache = CachingAuthorizationProvider(wrapping: wrapped, clock: clock)
        let issuedIn = cache.refresher.credentialGeneration
        await cache.identityDidChange()
        await #expect(throws: RequestError.credentialCleared(endpoint: nil)) {
            try await cache.credential(for: retryContext(issuedBy: cache.refresher, generation: issuedIn))
        }
        #expect(wrapped.requestedContexts.isEmpty, "the wrapped provider is not asked for a request issued before the change")
    }

    // MARK: The same three checks behind an app's decorator

    /// As ``AppGenerationalProvider``, but it notes on each request the generation it issued in, as
    /// the built-in providers do: behind a decorator the authorizer sees only the decorator's type,
    /// and what the provider noted is all its checks have.
    final class NotingAppProvider: AuthorizationProvider, Credential.Issuer, Sendable {
        let inner = AppGenerationalProvider()
        var credentialGeneration: UInt64 { inner.credentialGeneration }
        func credential(for context: AuthorizationContext) async throws -> Credential {
            let generation = credentialGeneration
            let credential = try await inner.credential(for: context)
            context.noteIssued(by: self, generation: generation)
            return credential
        }
        func credentialRejected(_ credential: Credential, response: ServerResponse, context: AuthorizationContext) async -> RejectionDecision {
            await inner.credentialRejected(credential, response: response, context: context)
        }
    }

    @Test func behindADecoratorARejectionAfterALogoutFailsAsClearedAtItsEvaluationWithoutTellingTheProvider() async throws {
        let provider = NotingAppProvider()
        let authorizer = try authorizer(CountingForwardingDecorator(provider))
        let sent = try await authorizer.authorize(request)
        provider.inner.logout()
        let evaluation = await authorizer.evaluate(ServerResponse(statusCode: 401), to: sent)
        guard case .fail(let error) = evaluation else { Issue.record("a rejection after the logout was answered \(evaluation)"); return }
        #expect(error.code == .credentialCleared)
        #expect(error.response?.statusCode == 401)
        #expect(provider.inner.rejections.current == 0, "the provider is not told of a rejection after its logout")
    }

    @Test func behindADecoratorARetryAuthorizedAfterALogoutIsRefusedBeforeTheProviderIsAskedAgain() async throws {
        let provider = NotingAppProvider()
        let authorizer = try authorizer(CountingForwardingDecorator(provider))
        let sent = try await authorizer.authorize(request)
        #expect(await authorizer.evaluate(ServerResponse(statusCode: 401), to: sent) == .retry, "no logout yet: the rejection is retried")
        provider.inner.logout()
        do throws(RequestError) {
            let retry = try await authorizer.authorize(retrying: sent)
            Issue.record("the retry was authorized after the logout with \(retry.request.value(forHeader: "Authorization") ?? "nothing")")
        } catch {
            #expect(error.code == .credentialCleared)
            #expect(error.wasSent)
        }
        #expect(provider.inner.issued.current == 1, "no token was fetched for the retry after the logout")
    }

    @Test func behindADecoratorTheRefreshingProviderServesARetryOnlyInTheGenerationItNotedOnTheRequest() async throws {
        let refreshes = Counter()
        let provider = try RefreshingTokenProvider(token: .init("a0"), clock: clock, diagnostics: sink) { .init("a\(refreshes.increment())") }
        let decorator = CountingForwardingDecorator(provider)
        let sent = try await authorizer(decorator).authorize(request)
        // The retry's context as the authorizer makes it behind a decorator: only what the provider noted.
        guard let issuance = sent.issued?.context.issuance else { Issue.record("the request has no record of its issuers"); return }
        var retry = AuthorizationContext(request: request, attempt: 2, deadline: RequestDeadline(seconds: 60, from: clock))
        retry.issuedGeneration = IssuedGeneration(issuance: issuance)
        #expect(retry.issuedGeneration?.generation(for: provider.refresher) == provider.refresher.credentialGeneration, "the provider's refresher noted its generation")
        // The logout lands after the authorizer's checks passed, before the provider reads its state.
        provider.clearToken()
        await #expect(throws: RequestError.credentialCleared(endpoint: nil)) {
            try await decorator.credential(for: retry)
        }
        #expect(refreshes.current == 0, "nothing is refreshed for a request issued before the logout")
    }

    @Test func aContextMadeByHandKeepsNoRecordOfItsIssuers() async throws {
        let provider = try RefreshingTokenProvider(token: .init("a0"), clock: clock, diagnostics: sink) { .init("a1") }
        let context = AuthorizationContext(request: request)
        _ = try await provider.credential(for: context)
        #expect(context.issuedGeneration == nil)
        // Asked again with the same context after a logout, it is served as a first try.
        provider.clearToken()
        #expect(try await provider.credential(for: context) == .bearer("a1"))
    }

    @Test func anIssuedGenerationBindsOnlyTheProviderThatIssuedIt() throws {
        let issuer = AppGenerationalProvider(), other = AppGenerationalProvider()
        let issued = IssuedGeneration(issuer, generation: 7)
        #expect(issued.generation(for: issuer) == 7)
        #expect(issued.generation(for: other) == nil)
    }

    // MARK: An expiry's refresh is counted in the window

    @Test func anInstalledTokenThatGoesStaleIsRefreshedNoMoreThanTheWindowAllows() async throws {
        let refreshes = Counter()
        let provider = try RefreshingTokenProvider(token: .init("a0", expiresAt: clock.now().addingTimeInterval(600)), clock: clock, diagnostics: sink) { [clock] in
            .init("a\(refreshes.increment())", expiresAt: clock.now().addingTimeInterval(600))
        }
        let api = RecordingTransport()
        let client = AuthorizedHTTPClient(authorizer: try authorizer(provider, window: AuthorizationOptions.RefreshWindow(maximumRefreshes: 1, interval: 3_600)), transport: api)
        func send() async -> RequestError.Code? {
            do throws(RequestError) { _ = try await client.send(request); return nil } catch { return error.code }
        }
        #expect(await send() == nil, "the installed token is fresh")
        clock.advance(by: 600)
        #expect(await send() == nil, "it went stale: one refresh, the window's only one")
        clock.advance(by: 600)
        #expect(await send() == .refreshWindowExceeded, "stale again within the window's interval: no second refresh")
        #expect(refreshes.current == 1)
        #expect(api.requests.map { $0.value(forHeader: "Authorization") } == ["Bearer a0", "Bearer a1"])
        // Once the interval has passed, an expiry may refresh again.
        clock.advance(by: 3_600)
        #expect(await send() == nil)
        #expect(refreshes.current == 2)
    }
}
