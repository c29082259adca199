import Foundation
import SDKAuthorizationTesting
import Testing
import TestSupport
import SDKAuthorization
import SDKAuthorizationModeKit

/// A library is quiet when all is well: a rejection that a retry recovers from (a token rotated) is
/// an event and a debug line, never a warning; a rejection the request fails with is one warning.
@Suite("Quiet when all is well", .hangLimit)
struct QuietWhenAllIsWellTests {
    let sink = RecordingDiagnosticsSink()
    let events = RecordingEventObserver()
    static let url = URL(string: "https://api.example.com/v1/me")!

    /// A client whose token starts as "old" and refreshes to "new"; the server takes only "new".
    /// Requests carrying "old" are held until `held` of them have arrived, so each is rejected.
    func rotatingClient(held: Int) throws -> (AuthorizedHTTPClient, RecordingTransport) {
        let arrivedWithOld = Counter()
        let gate = AsyncGate()
        let transport = RecordingTransport { request in
            guard request.value(forHeader: "Authorization") == "Bearer new" else {
                if arrivedWithOld.increment() >= held { gate.open() }
                await gate.wait()
                return ServerResponse(statusCode: 401)
            }
            return ServerResponse(statusCode: 200)
        }
        // A clock that stands still: on a machine busy enough (ThreadSanitizer, 2 cores) the real
        // refresh timeout of 10 s passed before the refresh ran, and its warning was counted too.
        let clock = ManualClock()
        let tokens = try RefreshingTokenProvider(token: .init("old"), clock: clock, diagnostics: sink) { .init("new") }
        let authorizer = try RequestAuthorizer(policy: AuthorizationPolicy(rules: [AuthorizationRule(host: "api.example.com", scheme: .bearer)]),
                                               providers: [.bearer: tokens], clock: clock, diagnostics: sink, observer: events)
        return (AuthorizedHTTPClient(authorizer: authorizer, transport: transport), transport)
    }

    @Test func aTokenRotationThatTwentyRetriesRecoverFromLogsNoWarning() async throws {
        let (client, transport) = try rotatingClient(held: 20)
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<20 { group.addTask { try await client.send(OutgoingRequest(method: "GET", url: Self.url)).statusCode } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses == Array(repeating: 200, count: 20))
        #expect(transport.requests.filter { $0.value(forHeader: "Authorization") == "Bearer old" }.count == 20)
        // Every rejection is an event and one debug line; nothing reaches the default sink's warning level.
        #expect(events.events(.credentialRejected).count == 20)
        #expect(events.events(.retryScheduled).count == 20)
        #expect(sink.diagnostics.filter { $0.level > .debug }.map(\.message) == [])
        #expect(sink.diagnostics.filter { $0.event == "credentialRejected" }.count == 20)
    }

    @Test func aRejectionTheRequestFailsWithIsOneWarning() async throws {
        // On a clock that stands still, as above: a busy machine's real 10 s refresh timeout would
        // add a second warning (credentialTimedOut) that this test does not test.
        let clock = ManualClock()
        let tokens = try RefreshingTokenProvider(token: .init("old"), clock: clock, diagnostics: sink) { .init("new") }
        let authorizer = try RequestAuthorizer(policy: AuthorizationPolicy(rules: [AuthorizationRule(host: "api.example.com", scheme: .bearer)]),
                                               providers: [.bearer: tokens], clock: clock, diagnostics: sink, observer: events)
        let client = AuthorizedHTTPClient(authorizer: authorizer, transport: RecordingTransport(statusCode: 401))
        await #expect(throws: RequestError.self) { try await client.send(OutgoingRequest(method: "GET", url: Self.url)) }
        let warnings = sink.diagnostics.filter { $0.level >= .warning }
        #expect(warnings.count == 1)
        #expect(warnings.first?.message.hasPrefix("GET https://api.example.com/v1/me was rejected with HTTP 401") == true)
        #expect(warnings.first?.message.hasSuffix("on its retry; it fails (a request is retried once)") == true)
        #expect(warnings.first?.event == "credentialRejected")
        #expect(warnings.first?.message.contains("Bearer new") == false)
    }
}

/// The sink every `diagnostics:` parameter defaults to writes in debug builds only; one the app
/// makes writes in both.
@Suite("The default diagnostics sink", .hangLimit)
struct DefaultDiagnosticsSinkTests {
    @Test func theDefaultSinkWritesWarningsInDebugBuildsOnlyAndAnAppsSinkInEveryBuild() {
        let fallback = StandardErrorDiagnosticsSink.inDebugBuilds
        #expect(!fallback.writesInReleaseBuilds)
        #expect(fallback.minimumLevel == .warning)
        let chosen = StandardErrorDiagnosticsSink(minimumLevel: .debug)
        #expect(chosen.writesInReleaseBuilds)
        #expect(chosen.minimumLevel == .debug)
    }
}
