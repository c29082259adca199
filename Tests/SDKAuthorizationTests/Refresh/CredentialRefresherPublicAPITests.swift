import Foundation
import SDKAuthorization
import SDKAuthorizationModeKit
import SDKAuthorizationTesting
import Testing
import TestSupport

/// A mode an integrator writes with the kit's public API alone (no `@testable` in this file): it
/// says how to fetch a session token, and `CredentialRefresher` carries every guarantee. Each test
/// installs it behind ``CountingForwardingDecorator``, the naive decorator an app writes, so the
/// authorizer never sees the mode's own type.
@Suite("A mode built on CredentialRefresher keeps every guarantee, through the public API and behind a decorator", .hangLimit)
struct CredentialRefresherPublicAPITests {
    let clock = ManualClock()
    let sink = RecordingDiagnosticsSink()
    let url = URL(string: "https://api.example.com/v1/me")!

    /// The whole mode: a fetch, a freshness rule, a header.
    final class SessionProvider: AuthorizationProvider {
        let session: CredentialRefresher<String>
        let fetches = Counter()
        let refreshes = Locked<[CredentialRefresher<String>.Refresh]>([])
        let fetch: @Sendable (Int) async throws -> String?

        init(options: CredentialRefresher<String>.Options = .init(), clock: ManualClock, sink: RecordingDiagnosticsSink,
             isFresh: @escaping @Sendable (String) -> Bool = { _ in true },
             fetch: @escaping @Sendable (Int) async throws -> String? = { "session-\($0)" }) throws {
            session = try CredentialRefresher(options: options, clock: clock, diagnostics: sink, isFresh: isFresh, credential: { .bearer($0) })
            self.fetch = fetch
        }

        func credential(for context: AuthorizationContext) async throws -> Credential {
            try await session.credential(for: context) { [self] refresh in
                refreshes.withLock { $0.append(refresh) }
                return try await fetch(fetches.increment())
            }
        }

        func credentialRejected(_ credential: Credential, response: ServerResponse, context: AuthorizationContext) async -> RejectionDecision {
            session.rejected(credential, response: response)
        }

        func identityDidChange() async { session.clear() }
        var endsByDeadline: Bool { true }
    }

    func client(_ provider: SessionProvider, transport: RecordingTransport, window: AuthorizationOptions.RefreshWindow = AuthorizationOptions.RefreshWindow(),
                deadline: TimeInterval = 60) throws -> AuthorizedHTTPClient {
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(host: "api.example.com", scheme: .bearer))
        let authorizer = try RequestAuthorizer(policy: policy, providers: [.bearer: CountingForwardingDecorator(provider)],
                                               options: AuthorizationOptions(refreshWindow: window, requestDeadline: deadline),
                                               clock: clock, diagnostics: sink)
        return AuthorizedHTTPClient(authorizer: authorizer, transport: transport)
    }

    func send(_ client: AuthorizedHTTPClient) async -> Result<ServerResponse, RequestError> {
        do throws(RequestError) { return .success(try await client.send(OutgoingRequest(method: "GET", url: url))) } catch { return .failure(error) }
    }

    // MARK: One fetch for many waiters

    @Test func twentyConcurrentRequestsShareOneFetchAndEachCarriesItsValue() async throws {
        let gate = AsyncGate()
        let provider = try SessionProvider(clock: clock, sink: sink, fetch: { number in
            await gate.wait()
            return "session-\(number)"
        })
        let transport = RecordingTransport()
        let client = try client(provider, transport: transport)
        let requests = (0..<20).map { _ in Task { await send(client) } }
        await eventually("all waiting", { provider.session.waitingCount == 20 })
        gate.open()
        for request in requests { _ = try await request.value.get() }
        #expect(provider.fetches.current == 1)
        #expect(transport.requests.allSatisfy { $0.value(forHeader: "Authorization") == "Bearer session-1" })
        #expect(provider.session.heldRecords == 0, "nothing is held once every wait ended")
    }

    // MARK: What the fetch is told

    @Test func theFetchIsToldWhyItIsAskedWhatItReplacesAndTheServersRejection() async throws {
        let provider = try SessionProvider(clock: clock, sink: sink)
        let transport = RecordingTransport()
        transport.enqueue(.response(ServerResponse(statusCode: 200)),
                          .response(ServerResponse(statusCode: 401, headers: ["WWW-Authenticate": #"Bearer error="invalid_token""#])))
        let client = try client(provider, transport: transport)
        _ = try await send(client).get()
        _ = try await send(client).get()
        let refreshes = provider.refreshes.withLock { $0 }
        #expect(refreshes.map(\.reason) == [.noCredential, .rejected])
        #expect(refreshes.last?.replacing == "session-1")
        #expect(refreshes.last?.rejection?.statusCode == 401)
        #expect(refreshes.last?.rejection?.value(forHeader: "WWW-Authenticate") == #"Bearer error="invalid_token""#)
        #expect(transport.requests.last?.value(forHeader: "Authorization") == "Bearer session-2")
        #expect(!"\(refreshes)".contains("session-"), "a Refresh never shows the value it replaces")
    }

    // MARK: Options a mode author gets wrong

    static let badOptions: [(key: String, options: CredentialRefresher<String>.Options)] = [
        ("timeout", .init(timeout: -1)), ("timeout", .init(timeout: .nan)), ("timeout", .init(timeout: .infinity)),
        ("timeout", .init(timeout: 86_401)),
        ("waitLimit", .init(waitLimit: -0.5)), ("waitLimit", .init(waitLimit: .nan)), ("waitLimit", .init(waitLimit: .infinity)),
        ("waitLimit", .init(waitLimit: 1e300)),
        ("rejectionStatuses", .init(rejectionStatuses: [])), ("rejectionStatuses", .init(rejectionStatuses: [500])),
        ("rejectionStatuses", .init(rejectionStatuses: [401, 400])),
    ]

    @Test(arguments: badOptions.indices)
    func optionsNoRequestCouldMeetAreRefusedWhenTheRefresherIsMade(index: Int) {
        let (key, options) = Self.badOptions[index]
        #expect {
            _ = try CredentialRefresher<String>(options: options, clock: clock, isFresh: { _ in true }, credential: { .bearer($0) })
        } throws: { error in
            (error as? ConfigurationError)?.code == .invalidValue && (error as? ConfigurationError)?.key == key
        }
    }

    @Test func limitsAtTheirEdgesAreTaken() throws {
        for options in [CredentialRefresher<String>.Options(timeout: 0, waitLimit: 0), .init(timeout: 86_400, waitLimit: 86_400),
                        .init(rejectionStatuses: [403]), .init(rejectionStatuses: [401, 403])] {
            _ = try CredentialRefresher<String>(options: options, clock: clock, isFresh: { _ in true }, credential: { .bearer($0) })
        }
    }

    // MARK: Which answers mean "refresh"

    @Test func aStatusTheModeDoesNotNameFailsTheRequestAndOneItNamesRefreshes() async throws {
        for (statuses, expectRefresh) in [(Set([401]), false), (Set([401, 403]), true)] {
            let provider = try SessionProvider(options: .init(rejectionStatuses: statuses), clock: clock, sink: sink)
            let transport = RecordingTransport()
            transport.enqueue(.response(ServerResponse(statusCode: 403)))
            let result = await send(try client(provider, transport: transport))
            if expectRefresh {
                #expect(throws: Never.self) { try result.get() }
                #expect(provider.fetches.current == 2, "the 403 refreshed once")
            } else {
                #expect(throws: RequestError.self) { try result.get() }
                #expect(provider.fetches.current == 1, "a 403 the mode does not name refreshes nothing")
            }
        }
    }

    // MARK: Logout wins over a 401 in flight

    @Test func aRequestRejectedAfterALogoutIsNeitherFetchedForNorSentAgain() async throws {
        let provider = try SessionProvider(clock: clock, sink: sink)
        let arrived = AsyncGate(), answer = AsyncGate()
        let transport = RecordingTransport { _ in
            arrived.open()
            await answer.wait()
            return ServerResponse(statusCode: 401)
        }
        let client = try client(provider, transport: transport)
        let request = Task { await send(client) }
        await arrived.wait()
        await provider.identityDidChange()
        answer.open()
        guard case .failure(let error) = await request.value else { Issue.record("the request succeeded"); return }
        #expect(error.code == .credentialCleared)
        #expect(transport.requests.count == 1, "never sent again")
        #expect(provider.fetches.current == 1, "nothing fetched for a request issued before the logout")
    }

    @Test func theRefresherRefusesARejectionOfAValueIssuedBeforeALogoutEvenOutsideARequest() async throws {
        let provider = try SessionProvider(clock: clock, sink: sink)
        let context = AuthorizationContext(endpoint: nil, url: url)
        let credential = try await provider.credential(for: context)
        provider.session.clear()
        _ = try await provider.credential(for: context)
        #expect(provider.session.rejected(credential, response: ServerResponse(statusCode: 401)) == .fail)
        #expect(provider.fetches.current == 2)
    }

    // MARK: The refresh window bounds every fetch

    @Test func fetchesThatExpiriesStartAreCountedInTheRefreshWindow() async throws {
        // Every value is stale at once: each request starts a fetch, and only the window stops them.
        let provider = try SessionProvider(clock: clock, sink: sink, isFresh: { _ in false })
        let client = try client(provider, transport: RecordingTransport(), window: AuthorizationOptions.RefreshWindow(maximumRefreshes: 2, interval: 60))
        _ = try await send(client).get()
        _ = try await send(client).get()
        guard case .failure(let error) = await send(client) else { Issue.record("a third fetch within the window"); return }
        #expect(error.code == .refreshWindowExceeded)
        #expect(provider.fetches.current == 2)
        clock.advance(by: 60)
        _ = try await send(client).get()
        #expect(provider.fetches.current == 3, "the window admits again once its interval passed")
    }

    // MARK: Failures

    @Test func aFetchThatThrowsFailsEveryWaiterAtOnceAsRefreshFailedOrAsThrown() async throws {
        struct Denied: Error {}
        let wrapped = try SessionProvider(options: .init(failures: .refreshFailed), clock: clock, sink: sink, fetch: { _ in throw Denied() })
        guard case .failure(let error) = await send(try client(wrapped, transport: RecordingTransport())) else { Issue.record("sent"); return }
        #expect(error.code == .refreshFailed)
        #expect(error.underlyingError is Denied)
        #expect(sink.messages(at: .warning).contains { $0.contains("The token refresh failed (Denied); 1 waiting requests fail") })

        let own = try SessionProvider(options: .init(failures: .asThrown), clock: clock, sink: sink, fetch: { _ in throw RequestError.invalidCredential(endpoint: nil) })
        guard case .failure(let thrown) = await send(try client(own, transport: RecordingTransport())) else { Issue.record("sent"); return }
        #expect(thrown.code == .invalidCredential, "the mode's own error reaches the request as it is")
    }

    @Test func aFetchPastItsTimeoutFailsItsWaitersAsTimedOutAndTheNextRequestFetchesAgain() async throws {
        let hang = AsyncGate()
        let provider = try SessionProvider(options: .init(timeout: 5), clock: clock, sink: sink, fetch: { number in
            if number == 1 { await hang.wait() }
            return "session-\(number)"
        })
        let client = try client(provider, transport: RecordingTransport())
        let request = Task { await send(client) }
        await eventually("waiting", { provider.session.waitingCount == 1 })
        clock.advance(by: 5)
        guard case .failure(let error) = await request.value else { Issue.record("sent"); return }
        #expect(error.code == .credentialTimedOut)
        // Until the hung fetch returns, no second one starts; what it returns late serves.
        guard case .failure(let meanwhile) = await send(client) else { Issue.record("sent while the fetch still ran"); return }
        #expect(meanwhile.code == .credentialTimedOut)
        hang.open()
        await eventually("the hung fetch returned", { provider.session.current != nil })
        _ = try await send(client).get()
        #expect(provider.fetches.current == 1)
    }

    @Test func aWaitEndsAtItsRequestsDeadlineWhileTheFetchHangs() async throws {
        let hang = AsyncGate()
        let provider = try SessionProvider(clock: clock, sink: sink, fetch: { _ in
            await hang.wait()
            return nil
        })
        let client = try client(provider, transport: RecordingTransport(), deadline: 3)
        let request = Task { await send(client) }
        await eventually("waiting", { provider.session.waitingCount == 1 })
        clock.advance(by: 3)
        guard case .failure(let error) = await request.value else { Issue.record("sent"); return }
        #expect(error.code == .deadlineExceeded)
        hang.open()
    }

    @Test func aFetchThatReturnsNothingIsAnsweredByAValueSetLater() async throws {
        let provider = try SessionProvider(options: .init(cancelsUnwatchedFetch: false), clock: clock, sink: sink, fetch: { _ in nil })
        let transport = RecordingTransport()
        let client = try client(provider, transport: transport)
        let request = Task { await send(client) }
        await eventually("the fetch ran", { provider.fetches.current == 1 && provider.session.waitingCount == 1 })
        provider.session.set("set-by-the-app")
        _ = try await request.value.get()
        #expect(transport.requests.first?.value(forHeader: "Authorization") == "Bearer set-by-the-app")
    }

    // MARK: A credential sent only when the server challenges for it

    @Test func withSendsOnlyWhenChallengedEachFirstAttemptGoesBareAndItsChallengedRetryCarriesTheCredential() async throws {
        let provider = try SessionProvider(options: .init(sendsOnlyWhenChallenged: true), clock: clock, sink: sink)
        let transport = RecordingTransport { request in
            request.value(forHeader: "Authorization") == nil
                ? ServerResponse(statusCode: 401, headers: ["WWW-Authenticate": #"Bearer realm="api""#])
                : ServerResponse(statusCode: 200)
        }
        // A window of one refresh: the challenged retries are not refreshes and never use it up.
        let client = try client(provider, transport: transport, window: AuthorizationOptions.RefreshWindow(maximumRefreshes: 1, interval: 60))
        for _ in 0..<3 { _ = try await send(client).get() }
        #expect(transport.requests.map { $0.value(forHeader: "Authorization") } == [nil, "Bearer session-1", nil, "Bearer session-1", nil, "Bearer session-1"])
        #expect(provider.fetches.current == 1)
    }

    @Test func aBareRequestRejectedWithoutAChallengeFailsAndNothingIsFetched() async throws {
        let provider = try SessionProvider(options: .init(sendsOnlyWhenChallenged: true), clock: clock, sink: sink)
        let transport = RecordingTransport { _ in ServerResponse(statusCode: 401) }
        guard case .failure(let error) = await send(try client(provider, transport: transport)) else { Issue.record("succeeded"); return }
        #expect(error.code == .authorizationRejected)
        #expect(transport.requests.count == 1)
        #expect(provider.fetches.current == 0)
    }

    @Test func aBareRequestTheServerAcceptsFetchesNothing() async throws {
        let provider = try SessionProvider(options: .init(sendsOnlyWhenChallenged: true), clock: clock, sink: sink)
        let transport = RecordingTransport()
        _ = try await send(try client(provider, transport: transport)).get()
        #expect(transport.requests.first?.value(forHeader: "Authorization") == nil)
        #expect(provider.fetches.current == 0)
    }

    @Test func theRefreshingTokenProviderSendsItsTokenOnlyWhenChallengedWhenItsOptionsSaySo() async throws {
        let refreshes = Counter()
        let tokens = try RefreshingTokenProvider(options: .init(sendsOnlyWhenChallenged: true), clock: clock, diagnostics: sink) {
            "rtp-\(refreshes.increment())"
        }
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(host: "api.example.com", scheme: .bearer))
        let transport = RecordingTransport { request in
            request.value(forHeader: "Authorization") == nil
                ? ServerResponse(statusCode: 401, headers: ["WWW-Authenticate": "Bearer"])
                : ServerResponse(statusCode: 200)
        }
        let client = AuthorizedHTTPClient(authorizer: try RequestAuthorizer(policy: policy, providers: [.bearer: CountingForwardingDecorator(tokens)],
                                                                            clock: clock, diagnostics: sink), transport: transport)
        _ = try await client.send(OutgoingRequest(method: "GET", url: url))
        #expect(transport.requests.map { $0.value(forHeader: "Authorization") } == [nil, "Bearer rtp-1"])
    }
}
