import Foundation
import SDKAuthorizationTesting
import Testing
import TestSupport
import SDKAuthorization
import SDKAuthorizationModeKit

/// A refresh that fetches its token through the client it refreshes for (Ktor's refresh-through-
/// the-same-client scenario): when the token request needs the credential being refreshed, it fails
/// at once with a clear error instead of waiting for itself until the refresh timeout.
@Suite("A refresh that waits for itself", .hangLimit)
struct RefreshThatWaitsForItselfTests {
    static let user = URL(string: "https://api.example.com/v1/me")!
    static let token = URL(string: "https://api.example.com/oauth/token")!

    /// A client whose bearer provider's refresh sends `POST /oauth/token` through that same client;
    /// `tokenRule` is the rule for the token endpoint, if any (otherwise the host's bearer rule covers it).
    func client(tokenRule: AuthorizationRule? = nil) throws -> (AuthorizedHTTPClient, RecordingTransport, RecordingDiagnosticsSink) {
        let clock = ManualClock()
        let sink = RecordingDiagnosticsSink()
        let transport = RecordingTransport { request in
            if request.url.path == "/oauth/token" { return ServerResponse(statusCode: 200, body: Data("fresh".utf8)) }
            return ServerResponse(statusCode: request.value(forHeader: "Authorization") == "Bearer fresh" ? 200 : 401)
        }
        let box = Locked<AuthorizedHTTPClient?>(nil)
        let tokens = try RefreshingTokenProvider(token: .init("stale"), clock: clock, diagnostics: sink) {
            let client = try #require(box.withLock { $0 })
            let response = try await client.send(OutgoingRequest(method: "POST", url: Self.token))
            return .init(String(decoding: response.body, as: UTF8.self))
        }
        var rules = [AuthorizationRule]()
        if let tokenRule { rules.append(tokenRule) }
        rules.append(try AuthorizationRule(host: "api.example.com", scheme: .bearer))
        let authorizer = try RequestAuthorizer(policy: AuthorizationPolicy(rules: rules), providers: [.bearer: tokens], clock: clock, diagnostics: sink)
        let client = AuthorizedHTTPClient(authorizer: authorizer, transport: transport)
        box.withLock { $0 = client }
        return (client, transport, sink)
    }

    @Test func aTokenRequestThatNeedsTheTokenBeingRefreshedFailsAtOnceAndSoDoesTheRequestThatWaited() async throws {
        let (client, transport, _) = try client()
        // On a clock that never moves: a wait for itself would never end, so ending at all proves
        // it was detected rather than timed out (and a wait that is not detected fails here, cancelled).
        let ended = Counter()
        let send = Task { () -> RequestError? in
            defer { _ = ended.increment() }
            do throws(RequestError) { _ = try await client.send(OutgoingRequest(method: "GET", url: Self.user)); return nil } catch { return error }
        }
        await eventually("the request ended without the clock moving", { ended.current == 1 })
        send.cancel()
        let error = await send.value
        #expect(error?.code == .refreshWaitsForItself)
        #expect(error?.description.contains("POST https://api.example.com/oauth/token needs the credential that its own refresh is fetching") == true, "\(error?.description ?? "")")
        #expect(error?.description.contains("a rule with scheme .none for the token endpoint") == true)
        // The user's request went out once with the stale token; the token request never went out.
        #expect(transport.requests.map(\.url.path) == ["/v1/me"])
    }

    @Test func aTokenEndpointWithARuleOfItsOwnIsSentAndTheRefreshSucceeds() async throws {
        let (client, transport, _) = try client(tokenRule: try AuthorizationRule(host: "api.example.com", path: "/oauth/token", scheme: .none))
        let response = try await client.send(OutgoingRequest(method: "GET", url: Self.user))
        #expect(response.statusCode == 200)
        #expect(transport.requests.map(\.url.path) == ["/v1/me", "/oauth/token", "/v1/me"])
        #expect(transport.requests.last?.value(forHeader: "Authorization") == "Bearer fresh")
    }

    /// The documented way for a refresh to start a request it does not wait for: `Task.detached`
    /// does not inherit the refresh's mark, so the request waits for the refresh and is sent with
    /// the new token.
    @Test func aRequestTheRefreshStartsDetachedWaitsForTheRefreshAndIsSentWithItsToken() async throws {
        let clock = ManualClock()
        let transport = RecordingTransport { request in
            ServerResponse(statusCode: request.value(forHeader: "Authorization") == "Bearer fresh" ? 200 : 401)
        }
        let box = Locked<AuthorizedHTTPClient?>(nil)
        let reported = Locked<Task<Int, any Error>?>(nil)
        let tokens = try RefreshingTokenProvider(token: .init("stale"), clock: clock, diagnostics: RecordingDiagnosticsSink()) {
            let client = try #require(box.withLock { $0 })
            reported.withLock { $0 = Task.detached { try await client.send(OutgoingRequest(method: "POST", url: URL(string: "https://api.example.com/v1/events")!)).statusCode } }
            return .init("fresh")
        }
        let authorizer = try RequestAuthorizer(policy: AuthorizationPolicy(rules: [try AuthorizationRule(host: "api.example.com", scheme: .bearer)]),
                                               providers: [.bearer: tokens], clock: clock, diagnostics: RecordingDiagnosticsSink())
        let client = AuthorizedHTTPClient(authorizer: authorizer, transport: transport)
        box.withLock { $0 = client }
        #expect(try await client.send(OutgoingRequest(method: "GET", url: Self.user)).statusCode == 200)
        let report = try #require(reported.withLock { $0 })
        #expect(try await report.value == 200)
        #expect(transport.requests.filter { $0.url.path == "/v1/events" }.map { $0.value(forHeader: "Authorization") } == ["Bearer fresh"])
    }
}
