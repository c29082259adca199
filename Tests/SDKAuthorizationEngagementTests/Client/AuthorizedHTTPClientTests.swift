import Foundation
import SDKAuthorizationTesting
import EngagementTestSupport
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationEngagement

@Suite("The shared HTTP client", .hangLimit)
struct AuthorizedHTTPClientTests {
    private static let expectedPaths: [Endpoint.ID: String] = [
        .trackCustomers: "/track/v2/projects/project-1/customers",
        .trackEvents: "/track/v2/projects/project-1/customers/events",
        .trackCampaignClicks: "/track/v2/projects/project-1/campaigns/clicks",
        .customerAttributes: "/data/v2/projects/project-1/customers/attributes",
        .consentCategories: "/data/v2/projects/project-1/consent/categories",
        .inAppMessages: "/webxp/s/project-1/inappmessages?v=1",
        .appInboxFetch: "/webxp/projects/project-1/appinbox/fetch",
        .appInboxMarkAsRead: "/webxp/projects/project-1/appinbox/markasread",
        .selfCheckNotification: "/campaigns/send-self-check-notification?project_id=project-1",
    ]

    private func client(
        advancedAuthEnabled: Bool = false,
        provider: (any AuthorizationProvider)? = nil,
        transport: RecordingTransport = RecordingTransport(),
        sink: RecordingDiagnosticsSink = RecordingDiagnosticsSink(),
        policy: AuthorizationPolicy? = nil
    ) throws -> AuthorizedHTTPClient {
        try AuthorizedHTTPClient(
            configuration: engagementConfiguration(advancedAuthEnabled: advancedAuthEnabled),
            policy: policy,
            registry: provider.map { registry(with: $0) } ?? ProviderRegistry(),
            transport: transport,
            diagnostics: sink
        )
    }

    private func target(_ request: OutgoingRequest?) -> String? {
        guard let url = request?.url else { return nil }
        return url.path + (url.query.map { "?\($0)" } ?? "")
    }

    @Test func tokenModeSendsTheAPIKeyToAllNineEndpoints() async throws {
        let transport = RecordingTransport()
        let client = try client(transport: transport)
        for (id, path) in Self.expectedPaths {
            transport.clear()
            _ = try await client.send(id, body: Data("{}".utf8))
            let request = try #require(transport.requests.first)
            #expect(request.method == "POST")
            #expect(target(request) == path, "\(id)")
            #expect(request.value(forHeader: "Authorization") == "Token api-key-1", "\(id)")
        }
    }

    @Test func customerTokenModeSendsBearerToTheInboxEndpointsAndTheAPIKeyElsewhere() async throws {
        let transport = RecordingTransport()
        let provider = ScriptedProvider(.token("customer.jwt.token"))
        let client = try client(advancedAuthEnabled: true, provider: provider, transport: transport)
        for (id, path) in Self.expectedPaths {
            transport.clear()
            _ = try await client.send(id)
            let request = try #require(transport.requests.first)
            #expect(target(request) == path)
            let expected = [Endpoint.ID.appInboxFetch, .appInboxMarkAsRead].contains(id) ? "Bearer customer.jwt.token" : "Token api-key-1"
            #expect(request.value(forHeader: "Authorization") == expected, "\(id)")
        }
        #expect(provider.requestedContexts.count == 2)
    }

    @Test func theProviderIsAskedForEveryRequest() async throws {
        let provider = ScriptedProvider(.token("one.jwt.a"), .token("two.jwt.b"), .token("three.jwt.c"))
        let transport = RecordingTransport()
        let client = try client(advancedAuthEnabled: true, provider: provider, transport: transport)
        for _ in 0..<3 { _ = try await client.send(.appInboxFetch) }
        #expect(transport.requests.map { $0.value(forHeader: "Authorization") } == ["Bearer one.jwt.a", "Bearer two.jwt.b", "Bearer three.jwt.c"])
    }

    @Test func nilFromAnExponeaProviderFailsLocallyAndSendsNothing() async throws {
        let registry = ProviderRegistry()
        registry.register(NilReturningAuthProvider.self, as: "ExponeaAuthProvider")
        let transport = RecordingTransport()
        let client = try AuthorizedHTTPClient(
            configuration: engagementConfiguration(advancedAuthEnabled: true),
            registry: registry, transport: transport, diagnostics: RecordingDiagnosticsSink()
        )
        await #expect(throws: RequestError.missingCustomerToken(endpoint: .appInboxFetch)) {
            try await client.send(.appInboxFetch)
        }
        #expect(transport.requests.isEmpty)
    }

    @Test func emptyTokenFromAnExponeaProviderFailsLocallyAndSendsNothing() async throws {
        let registry = ProviderRegistry()
        registry.register(EmptyReturningAuthProvider.self, as: "ExponeaAuthProvider")
        let transport = RecordingTransport()
        let client = try AuthorizedHTTPClient(
            configuration: engagementConfiguration(advancedAuthEnabled: true),
            registry: registry, transport: transport, diagnostics: RecordingDiagnosticsSink()
        )
        await #expect(throws: RequestError.missingCustomerToken(endpoint: .appInboxMarkAsRead)) {
            try await client.send(.appInboxMarkAsRead)
        }
        #expect(transport.requests.isEmpty)
    }

    @Test func whiteSpaceTokenFromANativeProviderFailsLocally() async throws {
        let transport = RecordingTransport()
        let client = try client(advancedAuthEnabled: true, provider: ScriptedProvider(.token("  ")), transport: transport)
        await #expect(throws: RequestError.emptyCredential(endpoint: .appInboxFetch)) {
            try await client.send(.appInboxFetch)
        }
        #expect(transport.requests.isEmpty)
    }

    @Test func providerTokenWithCRLFIsRefusedAndNothingIsSent() async throws {
        let registry = ProviderRegistry()
        registry.register(InjectingAuthProvider.self, as: "ExponeaAuthProvider")
        let transport = RecordingTransport()
        let sink = RecordingDiagnosticsSink()
        let client = try AuthorizedHTTPClient(
            configuration: engagementConfiguration(advancedAuthEnabled: true),
            registry: registry, transport: transport, diagnostics: sink
        )
        await #expect(throws: RequestError.invalidCredential(endpoint: .appInboxFetch)) {
            try await client.send(.appInboxFetch)
        }
        #expect(transport.requests.isEmpty)
        #expect(!sink.diagnostics.contains { $0.message.contains("X-Injected") })
    }

    @Test func providerErrorFailsTheRequestWithoutSending() async throws {
        struct NoSession: Error {}
        let transport = RecordingTransport()
        let client = try client(advancedAuthEnabled: true, provider: ScriptedProvider(.failure(NoSession())), transport: transport)
        await #expect(throws: RequestError.providerFailed(NoSession(), endpoint: .appInboxFetch)) {
            try await client.send(.appInboxFetch)
        }
        #expect(transport.requests.isEmpty)
    }

    @Test func omittedCredentialSendsWithoutAuthorizationHeader() async throws {
        let transport = RecordingTransport()
        let client = try client(advancedAuthEnabled: true, provider: ScriptedProvider(.omitted), transport: transport)
        _ = try await client.send(.appInboxFetch)
        #expect(transport.requests.first?.value(forHeader: "Authorization") == nil)
    }

    /// The API key goes out as `Authorization: Token <key>` through the core's generic
    /// `Credential.authorization(scheme:_:)`: every key the configuration accepts is sent as written,
    /// and one the credential would refuse on every request is refused when the configuration is made.
    @Test(arguments: ["2jfsdg9ot7xsk1d3i3ntg8mo9rhg2u5c1y7tp4tmsz2l0ytyiq4g6qe0mnvqntbn", "api-key-1", "a.b_c~d+e/f==", "Token Ab-9"])
    func everyAPIKeyTheConfigurationAcceptsIsSentAsTheTokenScheme(configured: String) async throws {
        let transport = RecordingTransport()
        let configuration = try AuthorizationConfiguration(projectToken: "project-1", baseURL: "https://api.example.com", authorization: configured)
        let client = try AuthorizedHTTPClient(configuration: configuration, transport: transport, diagnostics: RecordingDiagnosticsSink())
        _ = try await client.send(.trackEvents, body: Data("{}".utf8))
        let key = configured.hasPrefix("Token ") ? String(configured.dropFirst("Token ".count)) : configured
        #expect(transport.requests.first?.value(forHeader: "Authorization") == "Token \(key)")
        #expect(configuration.authorization.map(String.init(describing:)) == "Token Authorization (token redacted)")
    }

    @Test(arguments: ["key:with", "key!", "a=b", "=abc"])
    func anAPIKeyThatIsNoToken68IsRefusedWhenTheConfigurationIsMadeNotOnEveryRequest(key: String) {
        #expect(throws: ConfigurationError.invalidValue(key: "authorization", reason: "the authorization token is not an RFC 7235 token68 (letters, digits, -._~+/ and a trailing =)")) {
            try AuthorizationConfiguration(projectToken: "project-1", baseURL: "https://api.example.com", authorization: "Token \(key)")
        }
    }

    @Test func callerSuppliedAuthorizationHeaderIsReplaced() async throws {
        let transport = RecordingTransport()
        let client = try client(transport: transport)
        _ = try await client.send(.trackEvents, body: Data("{}".utf8), headers: ["authorization": "Basic Zm9vOmJhcg==", "X-Trace": "1"])
        let request = try #require(transport.requests.first)
        #expect(request.headers.keys.filter { $0.lowercased() == "authorization" }.count == 1)
        #expect(request.value(forHeader: "Authorization") == "Token api-key-1")
        #expect(request.value(forHeader: "X-Trace") == "1")
        #expect(request.value(forHeader: "Content-Type") == "application/json")
        #expect(request.body == Data("{}".utf8))
    }

    @Test(arguments: [("X-Evil", "a\r\nInjected: 1"), ("X-Trace", "a\nb"), ("Bad Name", "v"), ("X-Nul", "a\u{0}"), ("", "v")])
    func extraHeaderThatWouldInjectIsRefusedAndNothingIsSent(name: String, value: String) async throws {
        let transport = RecordingTransport()
        await #expect(throws: RequestError.invalidHeader(name: name)) {
            try await client(transport: transport).send(.trackEvents, headers: [name: value])
        }
        #expect(transport.requests.isEmpty)
    }

    @Test func successReturnsTheResponse() async throws {
        let transport = RecordingTransport(statusCode: 201, body: #"{"ok":true}"#)
        let response = try await client(transport: transport).send(.trackCustomers)
        #expect(response.statusCode == 201)
        #expect(response.body == Data(#"{"ok":true}"#.utf8))
    }

    @Test(arguments: [401, 403])
    func authorizationFailureIsClassified(status: Int) async throws {
        let transport = RecordingTransport(statusCode: status, body: #"{"error":"invalid_api_key"}"#)
        await #expect(throws: RequestError.authorizationRejected(status: status, scheme: .apiKey, body: Data(#"{"error":"invalid_api_key"}"#.utf8), endpoint: .trackCustomers)) {
            try await client(transport: transport).send(.trackCustomers)
        }
    }

    @Test(arguments: [400, 404, 500, 503])
    func otherHTTPErrorsAreClassified(status: Int) async throws {
        let transport = RecordingTransport(statusCode: status, body: "nope")
        await #expect(throws: RequestError.httpError(status: status, body: Data("nope".utf8), endpoint: .trackCustomers)) {
            try await client(transport: transport).send(.trackCustomers)
        }
    }

    @Test func transportErrorIsClassified() async throws {
        struct Offline: Error, CustomStringConvertible { var description: String { "offline" } }
        let transport = RecordingTransport()
        transport.enqueue(.failure(Offline()))
        await #expect(throws: RequestError.transportFailed(Offline(), endpoint: .trackCustomers)) {
            try await client(transport: transport).send(.trackCustomers)
        }
    }

    @Test func unknownEndpointFailsLocally() async throws {
        let transport = RecordingTransport()
        await #expect(throws: RequestError.unknownEndpoint("nope")) {
            try await client(transport: transport).send("nope")
        }
        #expect(transport.requests.isEmpty)
    }

    @Test func rejectedBearerIsRetriedOnceWhenTheProviderAsksAndNeverTwice() async throws {
        let transport = RecordingTransport(statusCode: 401)
        let provider = ScriptedProvider(.token("old.jwt.token"), .token("new.jwt.token"), .token("newest.jwt.token"))
        provider.rejectionDecision = .retry
        await #expect(throws: RequestError.authorizationRejected(status: 401, scheme: .bearer, body: Data("{}".utf8), endpoint: .appInboxFetch)) {
            try await client(advancedAuthEnabled: true, provider: provider, transport: transport).send(.appInboxFetch)
        }
        #expect(transport.requests.map { $0.value(forHeader: "Authorization") } == ["Bearer old.jwt.token", "Bearer new.jwt.token"])
        #expect(provider.rejectedCredentials == ["old.jwt.token", "new.jwt.token"])
        #expect(provider.requestedContexts.map(\.attempt) == [1, 2])
    }

    @Test func retryWithAFreshTokenSucceeds() async throws {
        let transport = RecordingTransport()
        transport.enqueue(.response(ServerResponse(statusCode: 401)))
        let provider = ScriptedProvider(.token("old.jwt.token"), .token("new.jwt.token"))
        provider.rejectionDecision = .retry
        let response = try await client(advancedAuthEnabled: true, provider: provider, transport: transport).send(.appInboxFetch)
        #expect(response.statusCode == 200)
        #expect(transport.requests.count == 2)
    }

    @Test func rejectedBearerIsNotRetriedWhenTheProviderDeclines() async throws {
        let transport = RecordingTransport(statusCode: 403)
        let provider = ScriptedProvider(.token("a.b.c"))
        await #expect(throws: RequestError.self) {
            try await client(advancedAuthEnabled: true, provider: provider, transport: transport).send(.appInboxFetch)
        }
        #expect(transport.requests.count == 1)
    }

    @Test func redirectToAnotherHostDropsTheAuthorizationHeader() async throws {
        let transport = RecordingTransport { request in
            request.url.host == "api.example.com"
                ? ServerResponse(statusCode: 302, headers: ["Location": "https://cdn.other.example/landing"])
                : ServerResponse(statusCode: 200)
        }
        _ = try await client(transport: transport).send(.trackEvents, body: Data("{}".utf8))
        #expect(transport.requests.count == 2)
        #expect(transport.requests[0].value(forHeader: "Authorization") == "Token api-key-1")
        #expect(transport.requests[1].url.absoluteString == "https://cdn.other.example/landing")
        #expect(transport.requests[1].value(forHeader: "Authorization") == nil)
        #expect(transport.requests[1].method == "GET")
        #expect(transport.requests[1].body == nil)
    }

    @Test(arguments: [307, 308])
    func redirectThatWouldTakeTheBodyToAnotherOriginIsNotFollowed(status: Int) async throws {
        let transport = RecordingTransport { _ in ServerResponse(statusCode: status, headers: ["Location": "https://cdn.other.example/landing"]) }
        await #expect(throws: RequestError.redirectRefused("", response: ServerResponse(statusCode: status), endpoint: .trackEvents)) {
            try await client(transport: transport).send(.trackEvents, body: Data(#"{"secret":"payload"}"#.utf8))
        }
        #expect(transport.requests.count == 1)
    }

    /// The hop keeps its method and body; `/moved` is a path the policy names for no scheme, so the
    /// endpoint's credential does not follow it (issue 36: a hop is authorized for its own path).
    @Test func sameOriginTemporaryRedirectKeepsMethodAndBodyButNotTheCredentialOnAPathThePolicyDoesNotName() async throws {
        let transport = RecordingTransport { request in
            request.url.path == "/moved"
                ? ServerResponse(statusCode: 200)
                : ServerResponse(statusCode: 307, headers: ["Location": "/moved"])
        }
        _ = try await client(transport: transport).send(.trackEvents, body: Data("{}".utf8))
        #expect(transport.requests[1].method == "POST")
        #expect(transport.requests[1].body == Data("{}".utf8))
        #expect(transport.requests[0].value(forHeader: "Authorization") == "Token api-key-1")
        #expect(transport.requests[1].value(forHeader: "Authorization") == nil)
    }

    @Test func redirectToAnotherPortOrSchemeDropsTheAuthorizationHeader() async throws {
        for location in ["https://api.example.com:8443/x", "http://api.example.com/x"] {
            let transport = RecordingTransport { request in
                request.url.path.hasPrefix("/track")
                    ? ServerResponse(statusCode: 302, headers: ["Location": location])
                    : ServerResponse(statusCode: 200)
            }
            _ = try await client(transport: transport).send(.trackEvents)
            #expect(transport.requests.last?.value(forHeader: "Authorization") == nil, "\(location)")
        }
    }

    @Test func sameHostRedirectToAPathThePolicyDoesNotNameDropsTheCredentialAndSeeOtherBecomesGET() async throws {
        let transport = RecordingTransport { request in
            request.url.path == "/moved"
                ? ServerResponse(statusCode: 200)
                : ServerResponse(statusCode: 303, headers: ["Location": "/moved"])
        }
        _ = try await client(transport: transport).send(.trackEvents, body: Data("{}".utf8))
        #expect(transport.requests[1].url.absoluteString == "https://api.example.com/moved")
        #expect(transport.requests[1].value(forHeader: "Authorization") == nil)
        #expect(transport.requests[1].method == "GET")
        #expect(transport.requests[1].body == nil)
    }

    @Test func redirectLoopStopsAtTheLimit() async throws {
        let transport = RecordingTransport(statusCode: 302, headers: ["Location": "/again"])
        await #expect(throws: RequestError.tooManyRedirects(limit: AuthorizationOptions().redirectLimit, endpoint: .trackEvents)) {
            try await client(transport: transport).send(.trackEvents)
        }
        #expect(transport.requests.count == AuthorizationOptions().redirectLimit + 1)
    }

    @Test func noDiagnosticEverHoldsAWholeCredential() async throws {
        let token = makeJWT(["sub": "user-1", "exp": 4_000_000_000])
        let sink = RecordingDiagnosticsSink()
        let transport = RecordingTransport(statusCode: 401)
        let provider = ScriptedProvider(.token(token))
        _ = try? await client(advancedAuthEnabled: true, provider: provider, transport: transport, sink: sink).send(.appInboxFetch)
        _ = try? await client(transport: transport, sink: sink).send(.trackEvents)
        #expect(!sink.diagnostics.isEmpty)
        for diagnostic in sink.diagnostics {
            #expect(!diagnostic.message.contains(token))
            #expect(!diagnostic.message.contains("api-key-1"))
        }
    }

    @Test func bearerEndpointsWithAdvancedAuthDisabledAreAConfigurationError() throws {
        var policy = AuthorizationPolicy.engagement(advancedAuthEnabled: false)
        try policy.setScheme(.bearer, for: .customerAttributes)
        #expect(throws: ConfigurationError.customerTokenEndpointsWithoutAdvancedAuth(["customerAttributes"])) {
            try client(policy: policy)
        }
    }

    @Test func apiKeyEndpointsWithoutAnAuthorizationAreAConfigurationError() throws {
        #expect(throws: ConfigurationError.missingKey("authorization")) {
            try AuthorizedHTTPClient(
                configuration: engagementConfiguration(authorization: nil),
                transport: RecordingTransport(),
                diagnostics: RecordingDiagnosticsSink()
            )
        }
    }

    @Test func endpointAddedByTheSDKAuthorGetsItsScheme() async throws {
        var policy = AuthorizationPolicy.engagement(advancedAuthEnabled: true)
        try policy.add(Endpoint("contentBlocks", path: "/webxp/s/<projectToken>/inappcontentblocks?v=2"), scheme: .bearer)
        try policy.setScheme(.bearer, for: .customerAttributes)
        let transport = RecordingTransport()
        let client = try client(advancedAuthEnabled: true, provider: ScriptedProvider(.token("c.t.j")), transport: transport, policy: policy)
        _ = try await client.send("contentBlocks")
        _ = try await client.send(.customerAttributes)
        #expect(target(transport.requests[0]) == "/webxp/s/project-1/inappcontentblocks?v=2")
        #expect(transport.requests.allSatisfy { $0.value(forHeader: "Authorization") == "Bearer c.t.j" })
    }
}
