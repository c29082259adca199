import Foundation
import HTTPTypes
import OpenAPIRuntime
import SDKAuthorization
import SDKAuthorizationOpenAPI
import SDKAuthorizationTesting
import Testing

/// A bearer provider that records the accepted answers it is shown, when it asks for them.
final class AcceptedAnswerProvider: AuthorizationProvider, @unchecked Sendable {
    let inspectsAcceptedResponses: Bool
    private let lock = NSLock()
    private var recorded: [ServerResponse] = []   // only touched while `lock` is held

    init(inspects: Bool) { inspectsAcceptedResponses = inspects }

    var seen: [ServerResponse] { lock.withLock { recorded } }

    func credential(for context: AuthorizationContext) async throws -> Credential { .bearer("token-1") }

    func credentialAccepted(_ credential: Credential, response: ServerResponse, context: AuthorizationContext) async {
        lock.withLock { recorded.append(response) }
    }

    var endsByDeadline: Bool { true }
}

@Suite("OpenAPI client middleware: accepted answers for providers that read them", .timeLimit(.minutes(3)))
struct AcceptedAnswerMiddlewareTests {
    let baseURL = URL(string: "https://api.example.com")!
    let report = #"{"auth_error":{"error_code":22,"optional":true},"success":true}"#

    func middleware(_ provider: AcceptedAnswerProvider) throws -> AuthorizationMiddleware {
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(host: "api.example.com", path: "/v1/**", scheme: .bearer))
        return AuthorizationMiddleware(authorizer: try RequestAuthorizer(policy: policy, providers: [.bearer: provider], diagnostics: RecordingDiagnosticsSink()))
    }

    func answer(_ body: HTTPBody) -> @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?) {
        { _, _, _ in (HTTPResponse(status: .created), body) }
    }

    @Test func aSmallBodyOfKnownLengthIsShownToTheProviderAndTheCallerCanStillReadIt() async throws {
        let provider = AcceptedAnswerProvider(inspects: true)
        let (response, body) = try await middleware(provider).intercept(
            HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/v1/data"), body: HTTPBody("{}"), baseURL: baseURL,
            operationID: "data", next: answer(HTTPBody(report))
        )
        #expect(response.status == .created)
        #expect(try await String(collecting: try #require(body), upTo: 1024) == report)
        #expect(provider.seen.map(\.statusCode) == [201])
        #expect(provider.seen.first?.body == Data(report.utf8))
    }

    @Test func aStreamedBodyOfUnknownLengthIsNeverReadForTheProvider() async throws {
        let provider = AcceptedAnswerProvider(inspects: true)
        let streamed = HTTPBody(AsyncStream { continuation in
            continuation.yield(ArraySlice(report.utf8))
            continuation.finish()
        }, length: .unknown, iterationBehavior: .single)
        let (_, body) = try await middleware(provider).intercept(
            HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/v1/feed"), body: nil, baseURL: baseURL,
            operationID: "feed", next: answer(streamed)
        )
        #expect(provider.seen.map(\.statusCode) == [201], "shown, without a body")
        #expect(provider.seen.first?.body.isEmpty == true)
        #expect(try await String(collecting: try #require(body), upTo: 1024) == report, "the caller reads the stream untouched")
    }

    @Test func noBodyIsReadWhenNoProviderReadsAcceptedAnswers() async throws {
        let provider = AcceptedAnswerProvider(inspects: false)
        let single = HTTPBody(AsyncStream { continuation in
            continuation.yield(ArraySlice(report.utf8))
            continuation.finish()
        }, length: .known(Int64(report.utf8.count)), iterationBehavior: .single)
        let (_, body) = try await middleware(provider).intercept(
            HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/v1/feed"), body: nil, baseURL: baseURL,
            operationID: "feed", next: answer(single)
        )
        #expect(provider.seen.isEmpty)
        #expect(try await String(collecting: try #require(body), upTo: 1024) == report, "a single-pass body reaches the caller unread")
    }
}
