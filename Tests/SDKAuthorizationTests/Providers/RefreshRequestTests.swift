import Foundation
import SDKAuthorizationTesting
import Testing
import TestSupport
import SDKAuthorization
import SDKAuthorizationModeKit

/// What the refresh API can say (issue 35, item 5, after Ktor's bearer-auth tests): the refresh
/// function is told why it is asked and which token it replaces; which answers mean "refresh" is
/// the provider's to say; a refresh that fails after a rejection keeps the server's answer.
@Suite("The refresh is told why, and keeps the server's answer", .hangLimit)
struct RefreshRequestTests {
    let clock = ManualClock()
    let sink = RecordingDiagnosticsSink()
    static let url = URL(string: "https://api.example.com/v1/me")!
    static let challenge = #"Bearer realm="api", error="invalid_token""#

    func client(_ tokens: RefreshingTokenProvider, transport: RecordingTransport) throws -> AuthorizedHTTPClient {
        let authorizer = try RequestAuthorizer(policy: AuthorizationPolicy(rules: [AuthorizationRule(host: "api.example.com", scheme: .bearer)]),
                                               providers: [.bearer: tokens], clock: clock, diagnostics: sink)
        return AuthorizedHTTPClient(authorizer: authorizer, transport: transport)
    }

    /// A server that takes only `Bearer new`, and answers anything else with `status` and a challenge.
    func server(rejectingWith status: Int = 401) -> RecordingTransport {
        RecordingTransport { request in
            request.value(forHeader: "Authorization") == "Bearer new"
                ? ServerResponse(statusCode: 200)
                : ServerResponse(statusCode: status, headers: ["WWW-Authenticate": Self.challenge], body: Data(#"{"error":"invalid_token"}"#.utf8))
        }
    }

    @Test func aRefreshAfterARejectionIsToldTheTokenItReplacesAndTheServersAnswer() async throws {
        let asked = Locked<[RefreshingTokenProvider.RefreshRequest]>([])
        let tokens = try RefreshingTokenProvider(token: .init("old"), clock: clock, diagnostics: sink) { request in
            asked.withLock { $0.append(request) }
            return .init("new")
        }
        let response = try await client(tokens, transport: server()).send(OutgoingRequest(method: "GET", url: Self.url))
        #expect(response.statusCode == 200)
        let request = try #require(asked.withLock { $0.first })
        #expect(asked.withLock { $0.count } == 1)
        #expect(request.reason == .rejected)
        #expect(request.replacing?.value == "old")
        #expect(request.rejection?.statusCode == 401)
        #expect(request.rejection?.value(forHeader: "WWW-Authenticate") == Self.challenge)
    }

    @Test func aRefreshIsToldWhenThereIsNoTokenAndWhenTheTokenExpires() async throws {
        let asked = Locked<[RefreshingTokenProvider.RefreshRequest]>([])
        let expiring = RefreshingTokenProvider.Token("soon", expiresAt: clock.now().addingTimeInterval(30))
        let tokens = try RefreshingTokenProvider(clock: clock, diagnostics: sink) { [clock] request in
            asked.withLock { $0.append(request) }
            // The first refresh returns a token within the leeway, so the next request refreshes it.
            return request.reason == .noToken ? expiring : .init("new", expiresAt: clock.now().addingTimeInterval(3_600))
        }
        let client = try client(tokens, transport: RecordingTransport())
        _ = try await client.send(OutgoingRequest(method: "GET", url: Self.url))
        _ = try await client.send(OutgoingRequest(method: "GET", url: Self.url))
        let requests = asked.withLock { $0 }
        #expect(requests.map(\.reason) == [.noToken, .expiring])
        #expect(requests.map(\.replacing) == [nil, expiring])
        #expect(requests.allSatisfy { $0.rejection == nil })
    }

    @Test func a403FailsUnlessTheProviderSaysItMeansRefresh() async throws {
        let refreshes = Counter()
        let byDefault = try RefreshingTokenProvider(token: .init("old"), clock: clock, diagnostics: sink) { _ = refreshes.increment(); return .init("new") }
        let error = await #expect(throws: RequestError.self) { try await client(byDefault, transport: server(rejectingWith: 403)).send(OutgoingRequest(method: "GET", url: Self.url)) }
        #expect(error?.code == .authorizationRejected)
        #expect(refreshes.current == 0)

        let options = RefreshingTokenProvider.Options(rejectionStatuses: [401, 403])
        let saysSo = try RefreshingTokenProvider(token: .init("old"), options: options, clock: clock, diagnostics: sink) { _ = refreshes.increment(); return .init("new") }
        let transport = server(rejectingWith: 403)
        #expect(try await client(saysSo, transport: transport).send(OutgoingRequest(method: "GET", url: Self.url)).statusCode == 200)
        #expect(refreshes.current == 1)
        #expect(transport.requests.map { $0.value(forHeader: "Authorization") } == ["Bearer old", "Bearer new"])
    }

    @Test(arguments: [(Set<Int>(), "none"), (Set([500]), "500"), (Set([401, 400]), "400, 401")] as [(Set<Int>, String)])
    func rejectionStatusesOtherThan401And403AreRefused(_ statuses: Set<Int>, given: String) {
        let error = #expect(throws: ConfigurationError.self) {
            _ = try RefreshingTokenProvider(options: .init(rejectionStatuses: statuses)) { .init("new") }
        }
        #expect(error?.message == "The configuration key 'rejectionStatuses' is invalid: must be 401, 403 or both: a provider is asked only about those answers (\(given) given).")
    }

    @Test func aRefreshThatFailsAfterARejectionKeepsTheServersAnswerInTheError() async throws {
        struct AuthServerDown: Error {}
        let tokens = try RefreshingTokenProvider(token: .init("old"), clock: clock, diagnostics: sink) { () async throws -> RefreshingTokenProvider.Token in throw AuthServerDown() }
        let error = await #expect(throws: RequestError.self) { try await client(tokens, transport: server()).send(OutgoingRequest(method: "GET", url: Self.url)) }
        #expect(error?.code == .refreshFailed)
        #expect(error?.underlyingError is AuthServerDown)
        #expect(error?.wasSent == true)
        #expect(error?.response?.statusCode == 401)
        #expect(error?.response?.value(forHeader: "WWW-Authenticate") == Self.challenge)
    }

    @Test func aRetryWhoseSendFailsCarriesNoAnswerFromTheFirstAttempt() async throws {
        struct Offline: Error {}
        let tokens = try RefreshingTokenProvider(token: .init("old"), clock: clock, diagnostics: sink) { .init("new") }
        let transport = RecordingTransport { request in
            guard request.value(forHeader: "Authorization") == "Bearer new" else { return ServerResponse(statusCode: 401) }
            throw Offline()
        }
        let error = await #expect(throws: RequestError.self) { try await client(tokens, transport: transport).send(OutgoingRequest(method: "GET", url: Self.url)) }
        #expect(error?.code == .transportFailed)
        #expect(error?.response == nil)
    }

    @Test func aTokenAndARefreshRequestNeverShowTheTokenInTheirDescriptionOrDump() {
        let token = RefreshingTokenProvider.Token("s3cr3t-t0ken-value", expiresAt: Date(timeIntervalSince1970: 1_767_225_600))
        var dumped = ""
        dump(token, to: &dumped)
        for text in [token.description, token.debugDescription, "\(token)", String(reflecting: token), dumped] {
            #expect(!text.contains("s3cr3t"), "\(text)")
        }
        #expect(token.description == "Token (redacted, 18 chars), expires 2026-01-01T00:00:00Z")
    }
}
