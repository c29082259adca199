import AsyncHTTPClient
import Foundation
import IntegrationsTestSupport
import SDKAuthorization
import SDKAuthorizationAsyncHTTPClient
import SDKAuthorizationTesting
import Testing

/// Runs `body` with a transport (over the default shared client, which needs no shutdown) and a
/// loopback server, and always stops the server.
func withTransport(
    maximumResponseBodyBytes: Int = 10 << 20,
    _ reply: @escaping LoopbackServer.Handler,
    _ body: (AsyncHTTPClientHTTPTransport, LoopbackServer) async throws -> Void
) async throws {
    let server = try await LoopbackServer.start(reply)
    let transport = AsyncHTTPClientHTTPTransport(maximumResponseBodyBytes: maximumResponseBodyBytes)
    do {
        try await body(transport, server)
    } catch {
        try await server.stop()
        throw error
    }
    try await server.stop()
}

@Suite("AsyncHTTPClient transport", .timeLimit(.minutes(3)))
struct AsyncHTTPClientHTTPTransportTests {
    @Test func sendsMethodURLHeadersAndBodyAndReturnsStatusHeadersAndBody() async throws {
        try await withTransport({ _ in .respond(status: 201, headers: [("X-Answer", "yes")], body: #"{"created":true}"#) }) { transport, server in
            let url = server.baseURL.appendingPathComponent("items").absoluteString + "?page=2&q=a%20b"
            let response = try await transport.send(OutgoingRequest(
                method: "PUT", url: URL(string: url)!,
                headers: ["Authorization": "Bearer abc.def", "Content-Type": "application/json"], body: Data(#"{"name":"x"}"#.utf8)
            ))
            #expect(response.statusCode == 201)
            #expect(response.value(forHeader: "x-answer") == "yes")
            #expect(response.body == Data(#"{"created":true}"#.utf8))
            let seen = try #require(server.requests.first)
            #expect(seen.method == "PUT")
            #expect(seen.uri == "/items?page=2&q=a%20b")
            #expect(seen.header("Authorization") == "Bearer abc.def")
            #expect(seen.header("Content-Type") == "application/json")
            #expect(seen.body == Data(#"{"name":"x"}"#.utf8))
        }
    }

    @Test func a4xxOr5xxIsAResponseNotAnError() async throws {
        try await withTransport({ request in
            .respond(status: request.uri == "/a" ? 403 : 503, body: #"{"error":"bearer_required"}"#)
        }) { transport, server in
            let forbidden = try await transport.send(OutgoingRequest(method: "GET", url: server.baseURL.appendingPathComponent("a")))
            let unavailable = try await transport.send(OutgoingRequest(method: "GET", url: server.baseURL.appendingPathComponent("b")))
            #expect(forbidden.statusCode == 403)
            #expect(forbidden.body == Data(#"{"error":"bearer_required"}"#.utf8))
            #expect(unavailable.statusCode == 503)
        }
    }

    @Test func aRedirectIsReturnedAsItIsAndNotFollowed() async throws {
        try await withTransport({ _ in .respond(status: 302, headers: [("Location", "/elsewhere")]) }) { transport, server in
            let response = try await transport.send(OutgoingRequest(method: "GET", url: server.baseURL.appendingPathComponent("start")))
            #expect(response.statusCode == 302)
            #expect(response.value(forHeader: "Location") == "/elsewhere")
            #expect(server.requests.map(\.uri) == ["/start"])
        }
    }

    @Test func aResponseBodyOverTheLimitFailsTheAttempt() async throws {
        try await withTransport(maximumResponseBodyBytes: 8, { _ in .respond(status: 200, body: String(repeating: "x", count: 64)) }) { transport, server in
            await #expect(throws: (any Error).self) {
                _ = try await transport.send(OutgoingRequest(method: "GET", url: server.baseURL))
            }
        }
    }

    @Test func aCancelledSendEndsAndClosesItsConnectionWhileTheServerHasNotAnswered() async throws {
        try await withTransport({ _ in .hang }) { transport, server in
            let task = Task { try await transport.send(OutgoingRequest(method: "GET", url: server.baseURL.appendingPathComponent("slow"))) }
            await server.waitForRequests(1)
            task.cancel()
            await #expect(throws: CancellationError.self) { try await task.value }
            await server.waitForClosedConnections(1)
        }
    }

    @Test func theClientsDeadlineOnTheInjectedClockEndsARequestTheServerNeverAnswers() async throws {
        try await withTransport({ _ in .hang }) { transport, server in
            let clock = ManualClock()
            var policy = AuthorizationPolicy()
            policy.add(try AuthorizationRule(origin: server.baseURL, scheme: .bearer))
            let authorizer = try RequestAuthorizer(policy: policy, providers: [.bearer: ScriptedProvider(.token("a.jwt"))],
                                                   options: AuthorizationOptions(requestDeadline: 30), clock: clock,
                                                   diagnostics: RecordingDiagnosticsSink())
            let client = AuthorizedHTTPClient(authorizer: authorizer, transport: transport)
            let task = Task { try await client.send(OutgoingRequest(method: "GET", url: server.baseURL.appendingPathComponent("slow"))) }
            await server.waitForRequests(1)
            clock.advance(by: 30)
            await #expect(throws: RequestError.deadlineExceeded(endpoint: nil, after: 30)) { try await task.value }
            await server.waitForClosedConnections(1)
        }
    }

    @Test func aSendGivenADeadlineThatHasPassedEndsWithoutWaitingForTheServer() async throws {
        try await withTransport({ _ in .hang }) { transport, server in
            #expect(transport.endsByDeadline)
            let clock = ManualClock()
            let deadline = RequestDeadline(seconds: 0, from: clock)
            await #expect(throws: (any Error).self) {
                _ = try await transport.send(OutgoingRequest(method: "GET", url: server.baseURL.appendingPathComponent("slow")), deadline: deadline, clock: clock)
            }
        }
    }

    @Test func theAuthorizedClientOverThisTransportRefreshesAndRetriesOnceAfterA401() async throws {
        try await withTransport({ request in
            request.header("Authorization") == "Bearer new.jwt" ? .respond(status: 200, body: "{}") : .respond(status: 401, body: #"{"error":"token_expired"}"#)
        }) { transport, server in
            var policy = AuthorizationPolicy()
            policy.add(try AuthorizationRule(origin: server.baseURL, scheme: .bearer))
            let provider = ScriptedProvider(.token("old.jwt"), .token("new.jwt"))
            provider.rejectionDecision = .retry
            let events = RecordingEventObserver()
            let authorizer = try RequestAuthorizer(policy: policy, providers: [.bearer: provider], diagnostics: RecordingDiagnosticsSink(), observer: events)
            let client = AuthorizedHTTPClient(authorizer: authorizer, transport: transport)
            let response = try await client.send(OutgoingRequest(method: "GET", url: server.baseURL.appendingPathComponent("me")))
            #expect(response.statusCode == 200)
            #expect(server.requests.map { $0.header("Authorization") } == ["Bearer old.jwt", "Bearer new.jwt"])
            #expect(provider.rejections.first?.response.body == Data(#"{"error":"token_expired"}"#.utf8))
            #expect(events.kinds == [.requestAuthorized, .credentialRejected, .retryScheduled, .requestAuthorized])
        }
    }

    @Test func aRedirectToAnotherOriginIsFollowedByTheClientWithoutTheCredential() async throws {
        let other = try await LoopbackServer.start { _ in .respond(status: 200, body: "{}") }
        do {
            let target = other.baseURL.appendingPathComponent("landing").absoluteString
            try await withTransport({ _ in .respond(status: 302, headers: [("Location", target)]) }) { transport, server in
                var policy = AuthorizationPolicy()
                policy.add(try AuthorizationRule(origin: server.baseURL, scheme: .bearer))
                let authorizer = try RequestAuthorizer(policy: policy, providers: [.bearer: ScriptedProvider(.token("secret.jwt"))],
                                                       diagnostics: RecordingDiagnosticsSink())
                let client = AuthorizedHTTPClient(authorizer: authorizer, transport: transport)
                #expect(try await client.send(OutgoingRequest(method: "GET", url: server.baseURL.appendingPathComponent("start"))).statusCode == 200)
                #expect(server.requests.first?.header("Authorization") == "Bearer secret.jwt")
                #expect(other.requests.count == 1)
                #expect(other.requests.first?.header("Authorization") == nil)
            }
        } catch {
            try await other.stop()
            throw error
        }
        try await other.stop()
    }

    @Test func aBorrowedHTTPClientSharedSendsAndIsLeftRunning() async throws {
        try await withTransport({ request in .respond(status: 200, body: request.uri) }) { _, server in
            let borrowed = AsyncHTTPClientHTTPTransport(client: .shared, timeout: .seconds(5))
            #expect(borrowed.timeout == .seconds(5))
            let first = try await borrowed.send(OutgoingRequest(method: "GET", url: server.baseURL.appendingPathComponent("one")))
            // Nothing was shut down: the shared client sends the next request too.
            let second = try await AsyncHTTPClientHTTPTransport(client: .shared).send(OutgoingRequest(method: "GET", url: server.baseURL.appendingPathComponent("two")))
            #expect(first.body == Data("/one".utf8))
            #expect(second.body == Data("/two".utf8))
        }
    }

    @Test func aBorrowedClientThatFollowsARedirectItselfFailsTheSendInsteadOfReturningTheFollowedResponse() async throws {
        // HTTPClient.shared follows redirects: the loop's rules for a redirect would not run.
        try await withTransport({ request in
            request.uri == "/start" ? .respond(status: 302, headers: [("Location", "/landing")]) : .respond(status: 200, body: "{}")
        }) { _, server in
            let borrowed = AsyncHTTPClientHTTPTransport(client: .shared)
            do {
                _ = try await borrowed.send(OutgoingRequest(method: "GET", url: server.baseURL.appendingPathComponent("start")))
                Issue.record("a response AsyncHTTPClient reached by following a redirect was returned")
            } catch {
                #expect("\(error)".contains("redirectConfiguration: .disallow"))
            }
            #expect(server.requests.map(\.uri) == ["/start", "/landing"])
        }
    }
}
