import AuthorizationSamples
import Crypto
import Foundation
import GeneratedClientSample
import MetricsTestKit
import OpenAPIRuntime
import OpenAPIURLSession
import ReferenceBackend
import ReferenceBackendClient
import SDKAuthorization
import SDKAuthorizationEngagement
import SDKAuthorizationIDToken
import SDKAuthorizationMetrics
import SDKAuthorizationOpenAPI
import SDKAuthorizationTesting
import Synchronization
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The example of the OpenAPI middleware in the OpenAPI adapter's DocC article, verbatim inside a
/// function, against the client generated from the reference backend;
/// `theMiddlewareExampleInTheOpenAPIArticleIsTheCodeCompiledHere` checks that the article still says the same.
enum OpenAPIMiddlewareExample {
    static func run(client: AuthorizedHTTPClient) async throws -> Operations.AppInboxFetch.Output {
        let api = Client(
            serverURL: try Servers.Server1.url(),
            transport: URLSessionTransport(),
            middlewares: [AuthorizationMiddleware(authorizer: client.authorizer)]   // client: your AuthorizedHTTPClient
        )
        let inbox = try await api.appInboxFetch(path: .init(projectToken: "YOUR_PROJECT_TOKEN"), body: .json(.init(customerIds: .init(registered: "user-42"))))
        return inbox
    }
}

/// A client generated from the reference backend's OpenAPI document, authorized by the middleware,
/// against a real backend on loopback.
@Suite("Generated OpenAPI client, middleware and AsyncHTTPClient transport", .serialized, .timeLimit(.minutes(3)))
struct GeneratedClientEndToEndTests {
    @Test func theGeneratedClientIsAcceptedInTokenCustomerTokenAndRefreshCallbackModesOverEveryStack() async throws {
        try await withEnvironment { environment, backend in
            let rows = try await GeneratedClientSample.run(environment)
            #expect(rows.count == 12)
            for row in rows {
                #expect(row.asExpected, "\(row.mode): \(row.verdict) \(row.header)")
                #expect(row.verdict == "200 accepted", "\(row.mode)")
                #expect(!row.header.contains(environment.apiKey))
            }
            let records = await backend.records().filter { !$0.path.hasPrefix("/app/") }
            let events = records.filter { $0.path.hasSuffix("/customers/events") }
            let inbox = records.filter { $0.path.hasSuffix("/appinbox/fetch") }
            let ticketing = records.filter { $0.path == "/rover/ticketing" }
            #expect(events.count == 3 && events.allSatisfy { $0.authorization == "Token \(environment.apiKey)" })
            #expect(inbox.count == 3 && inbox.allSatisfy { $0.authorization?.hasPrefix("Bearer ") == true })
            // Per stack: one call after a refresh, then a rejected token and its retry with a fresh one.
            #expect(ticketing.count == 9)
            #expect(ticketing.allSatisfy { $0.authorization?.hasPrefix("Bearer ") == true })
        }
    }

    @Test func a401IsTurnedByTheMiddlewareIntoOneRefreshAndOneRetry() async throws {
        try await withEnvironment { environment, backend in
            let events = RecordingEventObserver()
            let idTokens = try IDTokenStore(authorizedDomains: [AuthorizedDomain(origin: environment.baseURL)], observer: events)
            let refreshes = Mutex(0)
            idTokens.registerTokenRefresh {
                refreshes.withLock { $0 += 1 }
                return try await AppServer.login(baseURL: environment.baseURL, userId: "fan-7")
            }
            try idTokens.setIDToken(try await AppServer.login(baseURL: environment.baseURL, userId: "fan-7", variant: "wrongKey"))
            var policy = AuthorizationPolicy()
            try policy.add(Endpoint("ticketing", method: "GET", path: "/rover/ticketing"), scheme: .bearer)
            let authorizer = try RequestAuthorizer(policy: policy, providers: [.bearer: idTokens], baseURL: environment.baseURL, observer: events)
            let api = Client(serverURL: environment.baseURL, transport: URLSessionTransport(),
                             middlewares: [AuthorizationMiddleware(authorizer: authorizer, operations: ["roverTicketing": "ticketing"])])
            await backend.clearRecords()

            let ticket = try await api.roverTicketing().ok.body.json
            #expect(ticket.subject == "fan-7")
            #expect(refreshes.withLock { $0 } == 1)
            let sent = await backend.records().filter { $0.path == "/rover/ticketing" }.compactMap(\.authorization)
            #expect(sent.count == 2)
            #expect(sent.first != sent.last)
            #expect(events.kinds == [.requestAuthorized, .credentialRejected, .retryScheduled, .waitStarted, .refreshStarted, .refreshFinished, .waitEnded, .requestAuthorized])
        }
    }

    @Test func metricsFromEveryStackAreRecordedByATestMetricsBackendWithTheExpectedCounts() async throws {
        try await withEnvironment { environment, _ in
            let metrics = TestMetrics()
            let rows = try await GeneratedClientSample.run(environment, observer: MetricsEventObserver(factory: metrics))
            #expect(rows.allSatisfy { $0.asExpected })
            // Per stack: 1 API-key call; 1 customer-token call, 1 ticketing call, and a rejected one retried.
            #expect(try metrics.expectCounter("sdkauth_requests_authorized_total", [("sdkauth.scheme", "apiKey")]).totalValue == 3)
            #expect(try metrics.expectCounter("sdkauth_requests_authorized_total", [("sdkauth.scheme", "bearer")]).totalValue == 3 * 4)
            #expect(try metrics.expectCounter("sdkauth_credential_rejections_total", [("sdkauth.scheme", "bearer"), ("http.response.status_code", "401")]).totalValue == 3)
            #expect(try metrics.expectCounter("sdkauth_retries_total", [("sdkauth.scheme", "bearer")]).totalValue == 3)
            #expect(try metrics.expectCounter("sdkauth_refreshes_total", []).totalValue == 3 * 2)
            #expect(try metrics.expectCounter("sdkauth_token_waits_total", []).totalValue == 3 * 2)
            #expect(try metrics.expectTimer("sdkauth_token_wait_duration", []).values.count == 6)
            #expect(metrics.counters.filter { $0.label == "sdkauth_refresh_window_exceeded_total" }.isEmpty)
        }
    }

    @Test func aFinalRejectionReachesTheGeneratedClientsCallerAsAClientErrorCarryingTheRequestError() async throws {
        try await withEnvironment { environment, _ in
            struct ExpiredTokenProvider: AuthorizationProvider {
                let baseURL: URL
                func credential(for context: AuthorizationContext) async throws -> Credential {
                    .bearer(try await AppServer.login(baseURL: baseURL, userId: "user-42", variant: "expired"))
                }
            }
            let client = try AuthorizedHTTPClient(configuration: environment.configuration(advancedAuthEnabled: true),
                                                  provider: ExpiredTokenProvider(baseURL: environment.baseURL))
            let api = Client(serverURL: environment.baseURL, transport: URLSessionTransport(),
                             middlewares: [AuthorizationMiddleware(authorizer: client.authorizer)])
            do {
                _ = try await api.appInboxFetch(path: .init(projectToken: environment.projectToken),
                                                body: .json(.init(customerIds: .init(registered: "user-42"))))
                Issue.record("an expired customer token was accepted")
            } catch let error as ClientError {
                let rejection = try #require(error.underlyingError as? RequestError)
                #expect(rejection.code == .authorizationRejected)
                #expect(rejection.status == 401)
                #expect(serverErrorCode(rejection.body) == "token_expired")
                #expect(error.operationID == "appInboxFetch")
            }
        }
    }

    @Test func theCommittedOpenAPIDocumentIsWhatTheBackendServesAndWhatTheClientWasGeneratedFrom() async throws {
        let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let document = try Data(contentsOf: samples.appendingPathComponent("Sources/ReferenceBackend/openapi.yaml"))
        try await withEnvironment { environment, _ in
            let (served, response) = try await URLSession.shared.data(from: environment.baseURL.appendingPathComponent("openapi.yaml"))
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            #expect(served == document, "the backend serves another document than openapi.yaml: run Scripts/generate-openapi-client")
        }
        let digest = SHA256.hash(data: document).map { String(format: "%02x", $0) }.joined()
        let clientFolder = samples.appendingPathComponent("Sources/ReferenceBackendClient")
        let generated = try FileManager.default.contentsOfDirectory(atPath: clientFolder.path).filter { $0.hasSuffix(".swift") }
        #expect(generated.contains("Client.swift") && generated.contains("Types.swift"))
        for file in generated {
            let text = try String(contentsOf: clientFolder.appendingPathComponent(file), encoding: .utf8)
            #expect(text.hasPrefix("// Generated by Scripts/generate-openapi-client from Samples/Sources/ReferenceBackend/openapi.yaml (SHA-256 \(digest))"),
                    "\(file) was generated from another document: run Scripts/generate-openapi-client")
        }
    }

    @Test func theMiddlewareExampleInTheOpenAPIArticleIsTheCodeCompiledHere() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let article = try String(contentsOf: root.appendingPathComponent(
            "Integrations/OpenAPI/Sources/SDKAuthorizationOpenAPI/SDKAuthorizationOpenAPI.docc/SDKAuthorizationOpenAPI.md"), encoding: .utf8)
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        func lines(_ text: some StringProtocol) -> [String] {
            text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        let block = try #require(article.components(separatedBy: "```swift\n").dropFirst().first?.components(separatedBy: "```").first)
        let expected = lines(block)
        let compiled = lines(try #require(source.components(separatedBy: "enum OpenAPIMiddlewareExample {").dropFirst().first?.components(separatedBy: "\n}").first))
        #expect(compiled.indices.contains { Array(compiled.dropFirst($0).prefix(expected.count)) == expected })
    }
}
