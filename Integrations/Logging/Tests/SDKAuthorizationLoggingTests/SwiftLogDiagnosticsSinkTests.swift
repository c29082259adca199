import Foundation
import InMemoryLogging
import Logging
import SDKAuthorization
import SDKAuthorizationModeKit
import SDKAuthorizationIDToken
import SDKAuthorizationLogging
import SDKAuthorizationTesting
import Testing

@Suite("swift-log diagnostics sink", .timeLimit(.minutes(3)))
struct SwiftLogDiagnosticsSinkTests {
    func logger(level: Logger.Level = .debug) -> (Logger, InMemoryLogHandler) {
        let handler = InMemoryLogHandler()
        var logger = Logger(label: "sdk.auth.tests") { _ in handler }
        logger.logLevel = level
        return (logger, handler)
    }

    @Test func aRejectionIsLoggedAtWarningWithEndpointSchemeAndEventAsMetadata() async throws {
        let (logger, handler) = logger()
        let provider = ScriptedProvider(.token("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1LTEifQ.c2lnbmF0dXJlLXRoYXQtaXMtc2VjcmV0"))
        var policy = AuthorizationPolicy()
        try policy.add(Endpoint("inbox", method: "GET", path: "/inbox"), scheme: .bearer)
        let authorizer = try RequestAuthorizer(policy: policy, providers: [.bearer: provider], baseURL: URL(string: "https://api.example.com"),
                                               diagnostics: SwiftLogDiagnosticsSink(logger: logger))
        let client = AuthorizedHTTPClient(authorizer: authorizer, transport: RecordingTransport(statusCode: 401))
        await #expect(throws: RequestError.self) { try await client.send("inbox") }

        let entry = try #require(handler.entries.first { $0.level == .warning })
        #expect(entry.metadata == [
            SwiftLogDiagnosticsSink.endpointKey: "inbox",
            SwiftLogDiagnosticsSink.schemeKey: "bearer",
            SwiftLogDiagnosticsSink.eventKey: "credentialRejected",
        ])
        #expect(entry.message.description.hasPrefix("inbox was rejected with HTTP 401"))
        #expect(!entry.message.description.contains("c2lnbmF0dXJlLXRoYXQtaXMtc2VjcmV0"))
    }

    @Test func aFailedRefreshIsLoggedWithoutTheURLsUserInfoQueryOrCredential() async throws {
        let (logger, handler) = logger()
        let sink = SwiftLogDiagnosticsSink(logger: logger)
        // The request has no endpoint, so it is named by its URL; the refresh's error text is the whole URL.
        let url = URL(string: "https://user:pw-secret@api.example.com/inbox?api_key=key-secret#frag-secret")!
        let provider = try RefreshingTokenProvider(diagnostics: sink) {
            throw URLError(.cannotConnectToHost, userInfo: [NSURLErrorFailingURLStringErrorKey: url.absoluteString])
        }
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(origin: URL(string: "https://api.example.com")!, scheme: .bearer))
        let authorizer = try RequestAuthorizer(policy: policy, providers: [.bearer: provider], diagnostics: sink)
        await #expect(throws: RequestError.self) {
            try await AuthorizedHTTPClient(authorizer: authorizer, transport: RecordingTransport())
                .send(OutgoingRequest(method: "GET", url: url, headers: ["X-Api-Key": "token-secret-value"]))
        }
        #expect(handler.entries.contains { $0.message.description.contains("The token refresh failed") })
        for entry in handler.entries {
            let text = "\(entry.message) \(entry.metadata)"
            #expect(!["user:", "pw-secret", "key-secret", "frag-secret", "token-secret-value"].contains { text.contains($0) }, "\(text)")
        }
    }

    @Test func eachLevelMapsToTheSameSwiftLogLevel() {
        let (logger, handler) = logger()
        let sink = SwiftLogDiagnosticsSink(logger: logger)
        for level in Diagnostic.Level.allCases { sink.record(Diagnostic(level: level, message: "\(level)")) }
        #expect(handler.entries.map(\.level) == [.debug, .info, .warning, .error])
        #expect(handler.entries.map(\.message.description) == ["debug", "info", "warning", "error"])
    }

    @Test func aDiagnosticWithoutFieldsHasNoMetadataAndOneBelowTheLoggersLevelIsDropped() {
        let (logger, handler) = logger(level: .warning)
        let sink = SwiftLogDiagnosticsSink(logger: logger)
        sink.record(Diagnostic(level: .info, message: "dropped", endpoint: "inbox"))
        sink.record(Diagnostic(level: .error, message: "kept"))
        #expect(handler.entries.map(\.message.description) == ["kept"])
        #expect(handler.entries.first?.metadata == [:])
    }

    @Test func aTimedOutWaitIsLoggedWithTheStableLineAndItsEvent() async throws {
        let (logger, handler) = logger()
        let clock = ManualClock()
        let store = try IDTokenStore(authorizedDomains: ["api.rover.io"], options: .init(refreshTimeout: 1), clock: clock,
                                     diagnostics: SwiftLogDiagnosticsSink(logger: logger))
        let context = AuthorizationContext(endpoint: "ticketing", url: URL(string: "https://api.rover.io/ticketing")!)
        let wait = Task { try await store.credential(for: context) }
        await clock.waitForSleepers(count: 1)
        clock.advance(by: 1)
        #expect(try await wait.value == .omitted)
        let entry = try #require(handler.entries.first { $0.message.description.hasPrefix("setIDToken was not called within 1 seconds") })
        #expect(entry.metadata[SwiftLogDiagnosticsSink.eventKey] == "waitEnded")
        #expect(entry.metadata[SwiftLogDiagnosticsSink.endpointKey] == "ticketing")
    }

    @Test func metadataSetInScopeIsKeptOnTheDiagnosticsOfARequestSentThere() async throws {
        let (logger, handler) = logger()
        let authorizer = try RequestAuthorizer(policy: AuthorizationPolicy(), providers: [:], diagnostics: SwiftLogDiagnosticsSink(logger: logger))
        let client = AuthorizedHTTPClient(authorizer: authorizer, transport: RecordingTransport(statusCode: 401))
        _ = await withLogger(mergingMetadata: ["request.id": "r-42"]) { _ in
            await #expect(throws: RequestError.self) {
                try await client.send(OutgoingRequest(method: "GET", url: URL(string: "https://api.example.com/inbox")!))
            }
        }
        let entry = try #require(handler.entries.first { $0.message.description.contains("carried no credential") })
        #expect(entry.metadata["request.id"] == "r-42")
    }

    @Test func theLoggersOwnMetadataAndTheDiagnosticsFieldsWinOverTheScopes() throws {
        let (base, handler) = logger()
        var logger = base
        logger[metadataKey: "component"] = "auth"
        let sink = SwiftLogDiagnosticsSink(logger: logger)
        withLogger(mergingMetadata: ["component": "caller", "trace": "t-1", SwiftLogDiagnosticsSink.endpointKey: "caller's"]) { _ in
            sink.record(Diagnostic(level: .info, message: "m", endpoint: "inbox"))
        }
        #expect(handler.entries.first?.metadata == [
            "component": "auth", "trace": "t-1", SwiftLogDiagnosticsSink.endpointKey: "inbox",
        ])
    }

    @Test func aSinkWithoutALoggerWritesToTheLoggerInScopeWithItsLevelAndMetadata() {
        let (logger, handler) = logger(level: .info)
        let sink = SwiftLogDiagnosticsSink()
        #expect(sink.logger == nil)
        withLogger(logger) { _ in
            withLogger(mergingMetadata: ["request.id": "r-7"]) { _ in
                sink.record(Diagnostic(level: .debug, message: "below the scope's level"))
                sink.record(Diagnostic(level: .warning, message: "kept", scheme: .bearer))
            }
        }
        #expect(handler.entries.map(\.message.description) == ["kept"])
        #expect(handler.entries.first?.metadata == ["request.id": "r-7", SwiftLogDiagnosticsSink.schemeKey: "bearer"])
    }
}
