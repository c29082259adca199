import AuthorizationSamples
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ReferenceBackend
import SDKAuthorization
import SDKAuthorizationModeKit
import SDKAuthorizationTesting
import Testing

/// The URLSession convenience (`RequestAuthorizer.data(for:using:endpoint:)`): an app's own
/// session, the framework's one request loop, over real HTTP against the reference backend, which
/// verifies real JWTs.
@Suite("URLSession convenience end to end", .timeLimit(.minutes(3)))
struct URLSessionEndToEndTests {
    /// An authorizer whose requests to the backend's `/rover/**` and `/__redirect` carry `tokens`.
    func authorizer(_ environment: SampleEnvironment, _ tokens: RefreshingTokenProvider) throws -> RequestAuthorizer {
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(origin: environment.baseURL, path: "/rover/**", scheme: .bearer))
        policy.add(try AuthorizationRule(origin: environment.baseURL, path: "/__redirect", scheme: .bearer))
        return try RequestAuthorizer(policy: policy, providers: [.bearer: tokens], diagnostics: RecordingDiagnosticsSink())
    }

    @Test func aRejectedTokenIsRefreshedOnceAndTheRequestRetriedThroughTheAppsSession() async throws {
        try await withEnvironment { environment, backend in
            let refreshes = Counter()
            let forged = try await AppServer.login(baseURL: environment.baseURL, userId: "fan-7", variant: "wrongKey")
            let tokens = try RefreshingTokenProvider(token: .init(forged), diagnostics: RecordingDiagnosticsSink()) {
                refreshes.increment()
                return .init(try await AppServer.login(baseURL: environment.baseURL, userId: "fan-7"))
            }
            let session = URLSession(configuration: .ephemeral)
            defer { session.finishTasksAndInvalidate() }
            let request = URLRequest(url: environment.baseURL.appendingPathComponent("rover/ticketing"))
            let (data, response) = try await authorizer(environment, tokens).data(for: request, using: session)
            #expect(response.statusCode == 200)
            #expect(String(decoding: data, as: UTF8.self).contains(#""subject":"fan-7""#))
            #expect(refreshes.count == 1)
            let headers = await backend.records().map(\.authorization)
            #expect(headers.count == 2)
            #expect(headers.first == "Bearer \(forged)")
            #expect(headers.last != headers.first)
            #expect(headers.last??.hasPrefix("Bearer ") == true)
        }
    }

    @Test func theAppsSessionDoesNotCarryTheTokenAcrossARedirectToAnotherOrigin() async throws {
        try await withEnvironment { environment, backend in
            let token = try await AppServer.login(baseURL: environment.baseURL, userId: "fan-7")
            let tokens = try RefreshingTokenProvider(token: .init(token), diagnostics: RecordingDiagnosticsSink()) { .init(token) }
            // The same server under another name is another origin.
            let port = try #require(environment.baseURL.port)
            let target = "http://localhost:\(port)/rover/ticketing"
            let hop = environment.baseURL.absoluteString + "/__redirect?status=302&to=" + (target.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
            let session = URLSession(configuration: .ephemeral)
            defer { session.finishTasksAndInvalidate() }
            let authorizer = try authorizer(environment, tokens)
            let request = URLRequest(url: try #require(URL(string: hop)))
            do throws(RequestError) {
                _ = try await authorizer.data(for: request, using: session)
                Issue.record("the other origin accepted a request without a token")
            } catch {
                #expect(error.code == .authorizationRejected)
                #expect(rejection(error)?.code == "missing_authorization")
            }
            // The hop reached the backend as the redirect's target, without the token; the session
            // did not follow the redirect by itself with the header.
            #expect(await backend.records().map(\.authorization) == ["Bearer \(token)", nil])
        }
    }

    @Test func theTransportOverTheAppsOwnSessionSendsThroughItAndLeavesItUsable() async throws {
        try await withEnvironment { environment, backend in
            let token = try await AppServer.login(baseURL: environment.baseURL, userId: "fan-7")
            let tokens = try RefreshingTokenProvider(token: .init(token), diagnostics: RecordingDiagnosticsSink()) { .init(token) }
            // The app's session: a header of its own on every request shows the request went through it.
            let configuration = URLSessionConfiguration.ephemeral
            configuration.httpAdditionalHeaders = ["X-App-Session": "mine"]
            let session = URLSession(configuration: configuration)
            defer { session.finishTasksAndInvalidate() }
            do {
                let client = AuthorizedHTTPClient(authorizer: try authorizer(environment, tokens), transport: URLSessionHTTPTransport(session: session))
                let response = try await client.send(OutgoingRequest(method: "GET", url: environment.baseURL.appendingPathComponent("rover/ticketing")))
                #expect(response.statusCode == 200)
                #expect(String(decoding: response.body, as: UTF8.self).contains(#""subject":"fan-7""#))
            }
            // The client is gone; the session is still the app's, and still sends.
            let (_, plain) = try await session.data(from: environment.baseURL.appendingPathComponent("openapi.yaml"))
            #expect((plain as? HTTPURLResponse)?.statusCode == 200)
            let records = await backend.records()
            #expect(records.first?.authorization == "Bearer \(token)")
            #expect(records.first?.headerNames.contains("x-app-session") == true)
        }
    }
}
