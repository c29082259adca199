import Foundation
import HTTPTypes
import OpenAPIRuntime
import SDKAuthorization
import SDKAuthorizationEngagement
import SDKAuthorizationModeKit
import SDKAuthorizationOpenAPI
import SDKAuthorizationTesting
import Testing

/// What `next` received, attempt by attempt.
final class NextCalls: Sendable {
    struct Call: Sendable {
        let request: HTTPRequest
        let body: Data?
        let baseURL: URL
    }

    private let lock = NSLock()
    nonisolated(unsafe) private var recorded: [Call] = []   // only touched while `lock` is held

    func append(_ call: Call) -> Int {
        lock.lock()
        defer { lock.unlock() }
        recorded.append(call)
        return recorded.count
    }

    var calls: [Call] {
        lock.lock()
        defer { lock.unlock() }
        return recorded
    }

    var authorizations: [String?] { calls.map { $0.request.headerFields[.authorization] } }
}

/// A value a `@Sendable` closure of a test sets and the test reads.
final class TestingBox<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    nonisolated(unsafe) private var stored: Value   // only touched while `lock` is held

    init(_ value: Value) { stored = value }

    var value: Value {
        get { lock.lock(); defer { lock.unlock() }; return stored }
        set { lock.lock(); defer { lock.unlock() }; stored = newValue }
    }
}

@Suite("OpenAPI client middleware", .timeLimit(.minutes(3)))
struct AuthorizationMiddlewareTests {
    let calls = NextCalls()
    let baseURL = URL(string: "https://api.example.com")!

    /// A `next` that records each attempt and answers the statuses given, in order (then 200).
    func next(_ statuses: [HTTPResponse.Status], body: String = #"{"error":"token_expired"}"#)
        -> @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?) {
        { [calls] request, body, baseURL in
            var bytes: Data?
            if let body { bytes = try await Data(collecting: body, upTo: 1 << 20) }
            let count = calls.append(.init(request: request, body: bytes, baseURL: baseURL))
            let status = count <= statuses.count ? statuses[count - 1] : .ok
            return (HTTPResponse(status: status, headerFields: [.wwwAuthenticate: #"Bearer error="invalid_token""#]), HTTPBody(bodyText(status)))
        }
    }

    func bodyText(_ status: HTTPResponse.Status) -> String {
        status.code == 200 ? #"{"success":true}"# : #"{"error":"token_expired"}"#
    }

    func bearerAuthorizer(_ provider: ScriptedProvider, events: RecordingEventObserver? = nil, clock: any AuthorizationClock = ManualClock()) throws -> RequestAuthorizer {
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(host: "api.example.com", path: "/v1/**", scheme: .bearer))
        try policy.add(Endpoint("inbox", method: "POST", path: "/v2/inbox"), scheme: .bearer)
        return try RequestAuthorizer(policy: policy, providers: [.bearer: provider], baseURL: baseURL, clock: clock,
                                     diagnostics: RecordingDiagnosticsSink(), observer: events)
    }

    @Test func anOperationIDNamingACatalogueEndpointGetsThatEndpointsScheme() async throws {
        let configuration = try AuthorizationConfiguration(projectToken: "project-1", baseURL: "https://api.example.com", authorization: "Token api-key-1")
        let client = try AuthorizedHTTPClient(configuration: configuration, transport: RecordingTransport(), diagnostics: RecordingDiagnosticsSink())
        let middleware = AuthorizationMiddleware(authorizer: client.authorizer)
        #expect(middleware.endpoint(forOperation: "trackEvents") == .trackEvents)
        let request = HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/track/v2/projects/project-1/customers/events")
        let (response, _) = try await middleware.intercept(request, body: HTTPBody("{}"), baseURL: baseURL, operationID: "trackEvents", next: next([]))
        #expect(response.status == .ok)
        #expect(calls.authorizations == ["Token api-key-1"])
    }

    @Test func aMappedOperationUsesTheEndpointItIsMappedTo() async throws {
        let provider = ScriptedProvider(.token("inbox.jwt"))
        let middleware = AuthorizationMiddleware(authorizer: try bearerAuthorizer(provider), operations: ["fetchInbox": "inbox"])
        #expect(middleware.endpoint(forOperation: "fetchInbox") == "inbox")
        _ = try await middleware.intercept(HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/v2/inbox"), body: nil,
                                           baseURL: baseURL, operationID: "fetchInbox", next: next([]))
        #expect(provider.requestedContexts.map(\.endpoint) == ["inbox"])
        #expect(calls.authorizations == ["Bearer inbox.jwt"])
    }

    @Test func anUnmappedOperationIsMatchedByMethodAndURLAndAnUnmatchedOneGetsNoCredential() async throws {
        let provider = ScriptedProvider(.token("rule.jwt"))
        let middleware = AuthorizationMiddleware(authorizer: try bearerAuthorizer(provider))
        #expect(middleware.endpoint(forOperation: "sendMessage") == nil)
        _ = try await middleware.intercept(HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/v1/messages?lang=en"), body: HTTPBody("hi"),
                                           baseURL: baseURL, operationID: "sendMessage", next: next([]))
        _ = try await middleware.intercept(HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/public/status"), body: nil,
                                           baseURL: baseURL, operationID: "status", next: next([]))
        #expect(calls.authorizations == ["Bearer rule.jwt", nil])
        #expect(provider.requestedContexts.first?.url.absoluteString == "https://api.example.com/v1/messages?lang=en")
    }

    @Test func a401IsTurnedIntoOneRefreshAndOneRetryThroughNext() async throws {
        let provider = ScriptedProvider(.token("old.jwt"), .token("new.jwt"))
        provider.rejectionDecision = .retry
        let events = RecordingEventObserver()
        let middleware = AuthorizationMiddleware(authorizer: try bearerAuthorizer(provider, events: events))
        let request = HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/v1/messages", headerFields: [.contentType: "application/json"])
        let (response, body) = try await middleware.intercept(request, body: HTTPBody(#"{"text":"hi"}"#), baseURL: baseURL,
                                                              operationID: "sendMessage", next: next([.unauthorized]))
        #expect(response.status == .ok)
        #expect(try await String(collecting: try #require(body), upTo: 1024) == #"{"success":true}"#)
        #expect(calls.authorizations == ["Bearer old.jwt", "Bearer new.jwt"])
        #expect(calls.calls.allSatisfy { $0.body == Data(#"{"text":"hi"}"#.utf8) && $0.request.headerFields[.contentType] == "application/json" })
        // The provider saw the request body, then the rejection's header fields and body.
        #expect(provider.requestedContexts.first?.request.body == Data(#"{"text":"hi"}"#.utf8))
        let rejection = try #require(provider.rejections.first)
        #expect(rejection.credential == .bearer("old.jwt"))
        #expect(rejection.response.value(forHeader: "WWW-Authenticate") == #"Bearer error="invalid_token""#)
        #expect(rejection.response.body == Data(#"{"error":"token_expired"}"#.utf8))
        #expect(events.kinds == [.requestAuthorized, .credentialRejected, .retryScheduled, .requestAuthorized])
    }

    @Test func aSecond401FailsWithTheRejectionAfterOneRetry() async throws {
        let provider = ScriptedProvider(.token("old.jwt"), .token("new.jwt"))
        provider.rejectionDecision = .retry
        let middleware = AuthorizationMiddleware(authorizer: try bearerAuthorizer(provider))
        do {
            _ = try await middleware.intercept(HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/v1/me"), body: nil,
                                               baseURL: baseURL, operationID: "me", next: next([.unauthorized, .unauthorized]))
            Issue.record("a second 401 was accepted")
        } catch let error as RequestError {
            #expect(error.code == .authorizationRejected)
            #expect(error.status == 401)
            #expect(error.body == Data(#"{"error":"token_expired"}"#.utf8))
        }
        #expect(calls.calls.count == 2)
    }

    @Test func aRetryAfterADelayWaitsOnTheAuthorizersClock() async throws {
        let clock = SleepRecordingClock()
        let provider = ScriptedProvider(.token("old.jwt"), .token("new.jwt"))
        provider.rejectionDecision = .retryAfter(5)
        let middleware = AuthorizationMiddleware(authorizer: try bearerAuthorizer(provider, clock: clock))
        let start = clock.monotonicNow()
        let task = Task { [next = next([.unauthorized]), baseURL] in
            try await middleware.intercept(HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/v1/me"), body: nil,
                                           baseURL: baseURL, operationID: "me", next: next)
        }
        // The retry's wait, not another sleeper (the deadline alarms' driver sleeps on this clock too).
        for _ in 0..<200_000 where !clock.sleepsUntil.contains(start + 5) { await Task.yield() }
        try #require(clock.sleepsUntil.contains(start + 5), "the retry waits 5 s on the clock")
        #expect(calls.calls.count == 1)
        clock.advance(by: 5)
        #expect(try await task.value.0.status == .ok)
        #expect(calls.authorizations == ["Bearer old.jwt", "Bearer new.jwt"])
        #expect(clock.monotonicNow() - start == 5)
    }

    @Test func aRedirectReachingTheMiddlewareIsFollowedByTheSharedLoopWithoutTheCredentialOrCallerHeaders() async throws {
        let provider = ScriptedProvider(.token("me.jwt"))
        let middleware = AuthorizationMiddleware(authorizer: try bearerAuthorizer(provider))
        let calls = calls
        let next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?) = { request, _, baseURL in
            let count = calls.append(.init(request: request, body: nil, baseURL: baseURL))
            guard count == 1 else { return (HTTPResponse(status: .ok), HTTPBody("moved")) }
            return (HTTPResponse(status: .found, headerFields: [.location: "https://cdn.example.net/files/me?size=2"]), nil)
        }
        var request = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/v1/me")
        request.headerFields[HTTPField.Name("X-Api-Key")!] = "caller-secret"
        request.headerFields[.accept] = "application/json"
        let (response, _) = try await middleware.intercept(request, body: nil, baseURL: baseURL, operationID: "me", next: next)
        #expect(response.status == .ok)
        #expect(calls.calls.count == 2)
        let hop = try #require(calls.calls.last)
        #expect(hop.baseURL.absoluteString == "https://cdn.example.net")
        #expect(hop.request.path == "/files/me?size=2")
        #expect(hop.request.headerFields[.authorization] == nil)
        #expect(hop.request.headerFields[HTTPField.Name("X-Api-Key")!] == nil)
        #expect(hop.request.headerFields[.accept] == "application/json")
        #expect(calls.calls.first?.request.headerFields[.authorization] == "Bearer me.jwt")
    }

    @Test func anOperationMappedToAnEndpointOnAnotherOriginFailsBeforeItIsSent() async throws {
        let middleware = AuthorizationMiddleware(authorizer: try bearerAuthorizer(ScriptedProvider(.token("inbox.jwt"))), operations: ["fetchInbox": "inbox"])
        await #expect(throws: RequestError.self) {
            _ = try await middleware.intercept(HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/v2/inbox"), body: nil,
                                               baseURL: URL(string: "https://attacker.example.net")!, operationID: "fetchInbox", next: next([]))
        }
        #expect(calls.calls.isEmpty)
    }

    @Test func aProviderThatGivesNoTokenFailsTheOperationWithoutSendingIt() async throws {
        let middleware = AuthorizationMiddleware(authorizer: try bearerAuthorizer(ScriptedProvider(.token(""))))
        await #expect(throws: RequestError.emptyCredential(endpoint: nil)) {
            _ = try await middleware.intercept(HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/v1/me"), body: nil,
                                               baseURL: baseURL, operationID: "me", next: next([]))
        }
        #expect(calls.calls.isEmpty)
    }

    @Test func aRequestBodyOverTheLimitFailsBeforeItIsSent() async throws {
        var middleware = AuthorizationMiddleware(authorizer: try bearerAuthorizer(ScriptedProvider(.token("a.jwt"))))
        middleware.maximumBodyBytes = 8
        await #expect(throws: (any Error).self) {
            _ = try await middleware.intercept(HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/v1/messages"),
                                               body: HTTPBody(String(repeating: "x", count: 64)), baseURL: baseURL, operationID: "send", next: next([]))
        }
        #expect(calls.calls.isEmpty)
    }

    /// `bytes` in 64 KiB chunks, as a stream that can be read once, its length told or not.
    static func streamedBody(_ bytes: [UInt8], lengthKnown: Bool = true) -> HTTPBody {
        let chunks = stride(from: 0, to: bytes.count, by: 64 << 10).map { ArraySlice(bytes[$0..<min($0 + (64 << 10), bytes.count)]) }
        return HTTPBody(AsyncStream { continuation in
            for chunk in chunks { continuation.yield(chunk) }
            continuation.finish()
        }, length: lengthKnown ? .known(Int64(bytes.count)) : .unknown)
    }

    @Test func a2MiBStreamedBodyToAHostNoRuleNamesReachesNextUntouchedAndWhole() async throws {
        let provider = ScriptedProvider(.token("never.jwt"))
        let middleware = AuthorizationMiddleware(authorizer: try bearerAuthorizer(provider))
        let bytes = (0..<(2 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 11) }
        let body = Self.streamedBody(bytes)
        let received = TestingBox<(HTTPBody?, Data?)>((nil, nil))
        let (response, _) = try await middleware.intercept(
            HTTPRequest(method: .put, scheme: nil, authority: nil, path: "/upload"), body: body,
            baseURL: URL(string: "https://uploads.example.net")!, operationID: "upload"
        ) { request, forwarded, _ in
            #expect(request.headerFields[.authorization] == nil)
            var data: Data?
            if let forwarded { data = try await Data(collecting: forwarded, upTo: 4 << 20) }
            received.value = (forwarded, data)
            return (HTTPResponse(status: .ok), nil)
        }
        #expect(response.status == .ok)
        #expect(received.value.0 === body)   // the caller's stream itself, not a copy
        #expect(received.value.1 == Data(bytes))
        #expect(provider.requestedContexts.isEmpty)
    }

    @Test(arguments: [true, false])
    func aBodyTheProviderIsShownStillFailsClearlyOverTheLimitBeforeItIsSent(lengthKnown: Bool) async throws {
        let provider = ScriptedProvider(.token("a.jwt"))
        let middleware = AuthorizationMiddleware(authorizer: try bearerAuthorizer(provider))
        let body = Self.streamedBody([UInt8](repeating: 7, count: 2 << 20), lengthKnown: lengthKnown)
        do {
            _ = try await middleware.intercept(HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/v1/messages"),
                                               body: body, baseURL: baseURL, operationID: "send", next: next([]))
            Issue.record("a body over the limit was sent")
        } catch {
            #expect("\(error)".contains("longer than AuthorizationMiddleware.maximumBodyBytes (\(1 << 20) bytes)"))
            #expect("\(error)".contains("scheme (bearer)"))
        }
        #expect(calls.calls.isEmpty)
        #expect(provider.requestedContexts.isEmpty)
    }

    @Test func aStreamedBodyIsStillRefusedOnARedirectToAnotherOriginAndDroppedOnA303() async throws {
        let middleware = AuthorizationMiddleware(authorizer: try bearerAuthorizer(ScriptedProvider(.token("a.jwt"))))
        let calls = calls
        let hop = TestingBox<Int>(303)
        let next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?) = { request, body, baseURL in
            var bytes: Data?
            if let body { bytes = try await Data(collecting: body, upTo: 1 << 10) }
            _ = calls.append(.init(request: request, body: bytes, baseURL: baseURL))
            guard baseURL.host == "uploads.example.net", request.path == "/upload" else { return (HTTPResponse(status: .ok), nil) }
            let location = hop.value == 303 ? "https://uploads.example.net/done" : "https://elsewhere.example.org/upload"
            return (HTTPResponse(status: .init(code: hop.value), headerFields: [.location: location]), nil)
        }
        let request = HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/upload", headerFields: [.contentType: "text/plain"])
        let uploads = URL(string: "https://uploads.example.net")!
        _ = try await middleware.intercept(request, body: HTTPBody("hello"), baseURL: uploads, operationID: "upload", next: next)
        #expect(calls.calls.map(\.body) == [Data("hello".utf8), nil])
        #expect(calls.calls.last?.request.method == .get)
        #expect(calls.calls.last?.request.headerFields[.contentType] == nil)

        hop.value = 307
        await #expect(throws: RequestError.self) {
            _ = try await middleware.intercept(request, body: HTTPBody("hello"), baseURL: uploads, operationID: "upload", next: next)
        }
        #expect(calls.calls.count == 3)   // the 307 to another origin was not followed
    }

    @Test func aCallersOwnAuthorizationFieldIsReplacedByTheCredential() async throws {
        let middleware = AuthorizationMiddleware(authorizer: try bearerAuthorizer(ScriptedProvider(.token("policy.jwt"))))
        let request = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/v1/me", headerFields: [.authorization: "Bearer stale"])
        _ = try await middleware.intercept(request, body: nil, baseURL: baseURL, operationID: "me", next: next([]))
        #expect(calls.authorizations == ["Bearer policy.jwt"])
        #expect(calls.calls.first?.request.headerFields[values: .authorization].count == 1)
    }

    @Test(arguments: [
        ("https://api.example.com", "/v1/items?x=1", "https://api.example.com/v1/items?x=1"),
        ("https://api.example.com/", "/v1/items", "https://api.example.com/v1/items"),
        ("https://api.example.com/base", "/v1/items", "https://api.example.com/base/v1/items"),
        ("http://127.0.0.1:8080/api/", "/a%20b?q=%2F", "http://127.0.0.1:8080/api/a%20b?q=%2F"),
    ])
    func theProviderSeesTheBaseURLJoinedWithThePathAndQuery(base: String, path: String, expected: String) async throws {
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(host: "api.example.com", scheme: .bearer))
        policy.add(try AuthorizationRule(host: "http://127.0.0.1:8080", scheme: .bearer))
        let provider = ScriptedProvider(.token("any.jwt"))
        let authorizer = try RequestAuthorizer(policy: policy, providers: [.bearer: provider], diagnostics: RecordingDiagnosticsSink())
        let middleware = AuthorizationMiddleware(authorizer: authorizer)
        _ = try await middleware.intercept(HTTPRequest(method: .get, scheme: nil, authority: nil, path: path), body: nil,
                                           baseURL: URL(string: base)!, operationID: "op", next: next([]))
        #expect(provider.requestedContexts.first?.url.absoluteString == expected)
    }
}

/// A manual clock that records the time of every sleep on it, so a test can wait for one sleep in
/// particular.
final class SleepRecordingClock: AuthorizationClock, Sendable {
    private let clock = ManualClock()
    private let sleeps = Locked<[TimeInterval]>([])

    /// The monotonic times sleeps were asked to last until, in order.
    var sleepsUntil: [TimeInterval] { sleeps.withLock { $0 } }

    func now() -> Date { clock.now() }
    func monotonicNow() -> TimeInterval { clock.monotonicNow() }
    func sleep(untilMonotonic deadline: TimeInterval) async throws {
        sleeps.withLock { $0.append(deadline) }
        try await clock.sleep(untilMonotonic: deadline)
    }
    func advance(by seconds: TimeInterval) { clock.advance(by: seconds) }
}
