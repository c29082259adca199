import Foundation
import SDKAuthorizationModeKit
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import SDKAuthorizationTesting
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationEngagement
@testable import SDKAuthorizationSignature

/// A provider that signs the request it is shown: method, path, query and body go into the header.
struct PayloadSigningProvider: AuthorizationProvider {
    func credential(for context: AuthorizationContext) async throws -> Credential {
        let request = context.request
        let body = request.body.map { String(decoding: $0, as: UTF8.self) } ?? ""
        let query = request.url.query ?? ""
        let material = "\(request.method) \(request.url.path)?\(query) \(body) \(request.value(forHeader: "X-Nonce") ?? "")"
        return .header("X-Payload-Signature", value: base64URL(Data(material.utf8)))
    }
}

/// Reads the Braze-style JSON error body and `WWW-Authenticate` of a rejection.
final class ErrorBodyReadingProvider: AuthorizationProvider, Sendable {
    struct AuthErrorBody: Decodable {
        struct AuthError: Decodable { let error_code: Int; let reason: String }
        let auth_error: AuthError
        let user_id: String?
    }

    let seen = Locked<[(code: Int, reason: String, challenge: String?)]>([])

    func credential(for context: AuthorizationContext) async throws -> Credential {
        .header("X-Braze-Auth-Signature", value: "sig-\(context.attempt)")
    }

    func credentialRejected(_ credential: Credential, response: ServerResponse, context: AuthorizationContext) async -> RejectionDecision {
        guard let body = try? JSONDecoder().decode(AuthErrorBody.self, from: response.body) else { return .fail }
        seen.withLock { $0.append((body.auth_error.error_code, body.auth_error.reason, response.value(forHeader: "WWW-Authenticate"))) }
        return body.auth_error.error_code == 22 ? .retry : .fail
    }
}

@Suite("The authorization seam", .hangLimit)
struct RequestAuthorizerTests {
    let clock = ManualClock()
    let sink = RecordingDiagnosticsSink()

    func authorizer(
        _ policy: AuthorizationPolicy,
        _ providers: [AuthorizationScheme: any AuthorizationProvider],
        baseURL: String? = nil,
        options: AuthorizationOptions = AuthorizationOptions()
    ) throws -> RequestAuthorizer {
        try RequestAuthorizer(policy: policy, providers: providers, baseURL: baseURL.flatMap(URL.init(string:)),
                              options: options, clock: clock, diagnostics: sink)
    }

    func request(_ method: String = "GET", _ url: String, headers: [String: String] = [:], body: String? = nil) -> OutgoingRequest {
        OutgoingRequest(method: method, url: URL(string: url)!, headers: headers, body: body.map { Data($0.utf8) })
    }

    func rulePolicy(_ rules: AuthorizationRule...) -> AuthorizationPolicy {
        var policy = AuthorizationPolicy()
        rules.forEach { policy.add($0) }
        return policy
    }

    // MARK: 1. Authorize any request, evaluate its response

    @Test func anyRequestWithPathAndQueryGetsTheCredentialItsRuleNames() async throws {
        let policy = rulePolicy(try AuthorizationRule(host: "api.example.com", path: "/v2/users/*/inbox", method: "GET", scheme: .bearer))
        let authorizer = try authorizer(policy, [.bearer: ScriptedProvider(.token("user.jwt.1"))])
        let authorized = try await authorizer.authorize(request("GET", "https://api.example.com/v2/users/42/inbox?page=2&size=10"))
        #expect(authorized.request.value(forHeader: "Authorization") == "Bearer user.jwt.1")
        #expect(authorized.request.url.query == "page=2&size=10")
        #expect(authorized.scheme == .bearer)
        #expect(authorized.carriesCredential)
    }

    @Test func requestNoRuleMatchesGetsNoCredentialAndNoProviderIsAsked() async throws {
        let provider = ScriptedProvider(.token("user.jwt.1"))
        let policy = rulePolicy(try AuthorizationRule(host: "api.example.com", path: "/v2/**", method: "GET", scheme: .bearer))
        let authorizer = try authorizer(policy, [.bearer: provider])
        for unmatched in [request("GET", "https://evil.example/v2/x"), request("POST", "https://api.example.com/v2/x"),
                          request("GET", "https://api.example.com/v3/x"), request("GET", "https://api.example.com.evil.example/v2/x")] {
            let authorized = try await authorizer.authorize(unmatched)
            #expect(authorized.request.value(forHeader: "Authorization") == nil, "\(unmatched)")
            #expect(authorized.scheme == .none)
            #expect(!authorized.carriesCredential)
        }
        #expect(provider.requestedContexts.isEmpty)
    }

    @Test(arguments: [200, 201, 204, 302, 400, 404, 429, 500, 503])
    func statusesOtherThan401And403AreAccepted(status: Int) async throws {
        let authorizer = try authorizer(rulePolicy(try AuthorizationRule(host: "api.example.com", scheme: .bearer)), [.bearer: ScriptedProvider(.token("t"))])
        let authorized = try await authorizer.authorize(request("GET", "https://api.example.com/x"))
        #expect(await authorizer.evaluate(ServerResponse(statusCode: status), to: authorized) == .accept)
    }

    @Test func rejectionEvaluatesToRetryRetryAfterOrFailAsTheProviderDecides() async throws {
        let provider = ScriptedProvider(.token("t"))
        let authorizer = try authorizer(rulePolicy(try AuthorizationRule(host: "api.example.com", scheme: .bearer)), [.bearer: provider])
        let first = try await authorizer.authorize(request("GET", "https://api.example.com/x"))
        let rejected = ServerResponse(statusCode: 401, body: Data("no".utf8))
        provider.rejectionDecision = .retry
        #expect(await authorizer.evaluate(rejected, to: first) == .retry)
        provider.rejectionDecision = .retryAfter(2.5)
        #expect(await authorizer.evaluate(rejected, to: first) == .retryAfter(2.5))
        provider.rejectionDecision = .fail
        #expect(await authorizer.evaluate(rejected, to: first) == .fail(.authorizationRejected(response: rejected, scheme: .bearer)))
        // The retry is the last attempt: a second rejection fails whatever the provider says.
        provider.rejectionDecision = .retry
        let second = try await authorizer.authorize(retrying: first)
        #expect(second.attempt == 2)
        #expect(await authorizer.evaluate(rejected, to: second) == .fail(.authorizationRejected(response: rejected, scheme: .bearer)))
    }

    // MARK: 2. Policy for any request

    @Test func catalogueEndpointsAreFoundForRequestsMadeByAnotherStack() async throws {
        let provider = ScriptedProvider(.token("customer.jwt"))
        let policy = AuthorizationPolicy.engagement(advancedAuthEnabled: true)
        let authorizer = try RequestAuthorizer(
            policy: policy, providers: [.bearer: provider, .apiKey: ProjectAuthorizationProvider(.token("key-1"))],
            baseURL: URL(string: "https://api.example.com"), pathParameters: ["projectToken": "p1"], clock: clock, diagnostics: sink
        )
        let inbox = try await authorizer.authorize(request("POST", "https://api.example.com/webxp/projects/p1/appinbox/fetch"))
        #expect(inbox.endpoint == .appInboxFetch)
        #expect(inbox.request.value(forHeader: "Authorization") == "Bearer customer.jwt")
        let events = try await authorizer.authorize(request("POST", "https://api.example.com/track/v2/projects/p1/customers/events"))
        #expect(events.endpoint == .trackEvents)
        #expect(events.request.value(forHeader: "Authorization") == "Token key-1")
        // Same path on another host, or with another method: not the endpoint.
        let elsewhere = try await authorizer.authorize(request("POST", "https://api.example.org/webxp/projects/p1/appinbox/fetch"))
        let wrongMethod = try await authorizer.authorize(request("GET", "https://api.example.com/webxp/projects/p1/appinbox/fetch"))
        #expect(elsewhere.request.value(forHeader: "Authorization") == nil)
        #expect(wrongMethod.request.value(forHeader: "Authorization") == nil)
    }

    @Test func endpointTemplatesTakePathParametersAndAQuery() throws {
        var policy = AuthorizationPolicy()
        try policy.add(Endpoint("userInbox", method: "GET", path: "/v2/<projectToken>/users/<userId>/inbox?v=1"), scheme: .none)
        let authorizer = try RequestAuthorizer(policy: policy, providers: [:], baseURL: URL(string: "https://api.example.com/base"),
                                               pathParameters: ["projectToken": "p1"], diagnostics: sink)
        let built = try authorizer.request(for: "userInbox", parameters: ["userId": "a/b c", "projectToken": "ignored"],
                                           query: [URLQueryItem(name: "page", value: "2&x=1")])
        #expect(built.url.absoluteString == "https://api.example.com/base/v2/p1/users/a%2Fb%20c/inbox?v=1&page=2%26x%3D1")
        #expect(built.method == "GET")
    }

    @Test(arguments: [[:], ["userId": ""], ["userId": "."], ["userId": ".."]])
    func missingOrPathChangingParametersAreRefused(parameters: [String: String]) throws {
        var policy = AuthorizationPolicy()
        try policy.add(Endpoint("userInbox", method: "GET", path: "/v2/users/<userId>/inbox"), scheme: .none)
        let authorizer = try RequestAuthorizer(policy: policy, providers: [:], baseURL: URL(string: "https://api.example.com"), diagnostics: sink)
        #expect(throws: RequestError.invalidURL(endpoint: "userInbox")) {
            try authorizer.request(for: "userInbox", parameters: parameters)
        }
    }

    @Test(arguments: [
        ("/v2/users/*/inbox", "/v2/users/42/inbox", true), ("/v2/users/*/inbox", "/v2/users//inbox", false),
        ("/v2/users/*/inbox", "/v2/users/42/inbox/x", false), ("/v2/**", "/v2", true), ("/v2/**", "/v2/a/b/c", true),
        ("/v2/**", "/v20/a", false), ("/v2/<id>", "/v2/a%2Fb", true), ("/", "/", true), ("/a", "/A", false),
    ])
    func rulePathPatternsMatchWholeSegments(pattern: String, path: String, matches: Bool) throws {
        let rule = try AuthorizationRule(host: "api.example.com", path: pattern, scheme: .bearer)
        #expect(rule.matches(request("GET", "https://api.example.com\(path)")) == matches)
    }

    @Test(arguments: [("", "/x", nil as String?), ("*", "/x", nil), ("api.example.com", "x", nil), ("api.example.com", "/a/**/b", nil),
                      ("api.example.com", "/x", "GE T"), ("api.example.com", "/x", "")])
    func badRulesAreRefused(host: String, path: String, method: String?) {
        #expect(throws: ConfigurationError.self) { try AuthorizationRule(host: host, path: path, method: method, scheme: .bearer) }
    }

    @Test func aSchemeWithoutAProviderIsAConfigurationError() throws {
        let policy = rulePolicy(try AuthorizationRule(host: "api.example.com", scheme: "signature"))
        #expect(throws: ConfigurationError.missingProvider(scheme: "signature", endpoints: ["* api.example.com/** -> signature"])) {
            try RequestAuthorizer(policy: policy, providers: [:], diagnostics: sink)
        }
    }

    @Test func endpointRequestToAnotherOriginIsRefusedBeforeTheProviderIsAsked() async throws {
        var policy = AuthorizationPolicy()
        try policy.add(Endpoint("inbox", method: "GET", path: "/inbox"), scheme: .bearer)
        let provider = ScriptedProvider(.token("t"))
        let authorizer = try authorizer(policy, [.bearer: provider], baseURL: "https://api.example.com")
        await #expect(throws: RequestError.invalidURL(endpoint: "inbox")) {
            try await authorizer.authorize(request("GET", "https://evil.example/inbox"), endpoint: "inbox")
        }
        #expect(provider.requestedContexts.isEmpty)
    }

    // MARK: 3. Credentials are header fields

    @Test func customHeaderCredentialIsSentUnderItsOwnNameAndReplacesACallerField() async throws {
        let provider = ScriptedProvider(.credential(.header("X-Braze-Auth-Signature", value: "eyJ.sig.nature")))
        let authorizer = try authorizer(rulePolicy(try AuthorizationRule(host: "sdk.iad-01.braze.com", scheme: "signature")), ["signature": provider])
        let authorized = try await authorizer.authorize(request("POST", "https://sdk.iad-01.braze.com/api/v3/data", headers: ["x-braze-auth-signature": "forged"]))
        #expect(authorized.request.headers == ["X-Braze-Auth-Signature": "eyJ.sig.nature"])
        #expect(authorized.request.value(forHeader: "Authorization") == nil)
    }

    @Test(arguments: ["Host", "content-length", "Cookie", "Proxy-Authorization", "Transfer-Encoding", "Connection"])
    func aCredentialInAHeaderTheTransportOwnsFailsTheRequestLocally(name: String) async throws {
        let authorizer = try authorizer(rulePolicy(try AuthorizationRule(host: "api.example.com", scheme: .bearer)),
                                        [.bearer: ScriptedProvider(.credential(.header(name, value: "secret-value")))])
        await #expect {
            _ = try await authorizer.authorize(request("GET", "https://api.example.com/v1/me"))
        } throws: { error in
            guard let error = error as? RequestError else { return false }
            return error.code == .invalidCredential && !error.wasSent && !error.description.contains("secret-value")
        }
    }

    @Test(arguments: [
        Credential.header("X Bad", value: "v"), .header("", value: "v"), .header("X-Sig", value: "a\r\nX-Injected: 1"),
        .header("X-Sig", value: "caf\u{E9}"), .header("X-Sig", value: "a\u{2028}b"), .header("X-Sig", value: "a\u{202E}b"),
        .header("\u{212A}ey", value: "v"), .bearer("two words"), .bearer("a=b"), .bearer("tok\u{0}en"), .authorization(scheme: "Token", "key\u{7F}"),
    ])
    func credentialThatCannotGoIntoAHeaderFailsTheRequestLocally(credential: Credential) async throws {
        let authorizer = try authorizer(rulePolicy(try AuthorizationRule(host: "api.example.com", scheme: .bearer)), [.bearer: ScriptedProvider(.credential(credential))])
        await #expect(throws: RequestError.invalidCredential(endpoint: nil)) {
            try await authorizer.authorize(request("GET", "https://api.example.com/x"))
        }
    }

    @Test(arguments: [Credential.bearer(""), .bearer("   "), .header("X-Sig", value: ""), .authorization(scheme: "Token", " ")])
    func emptyCredentialFailsTheRequestLocally(credential: Credential) async throws {
        let authorizer = try authorizer(rulePolicy(try AuthorizationRule(host: "api.example.com", scheme: .bearer)), [.bearer: ScriptedProvider(.credential(credential))])
        await #expect(throws: RequestError.emptyCredential(endpoint: nil)) {
            try await authorizer.authorize(request("GET", "https://api.example.com/x"))
        }
    }

    @Test(arguments: ["eyJhbGciOi.eyJzdWIi.c2ln", "abc-._~+/", "YWJj==", "x"])
    func bearerTokensOfTheB64TokenGrammarAreSent(token: String) async throws {
        let authorizer = try authorizer(rulePolicy(try AuthorizationRule(host: "api.example.com", scheme: .bearer)), [.bearer: ScriptedProvider(.token(token))])
        let authorized = try await authorizer.authorize(request("GET", "https://api.example.com/x"))
        #expect(authorized.request.value(forHeader: "Authorization") == "Bearer \(token)")
    }

    @Test func credentialDescriptionsAndMirrorsNeverShowTheSecret() {
        let secret = "eyJhbGciOiJSUzI1NiJ9.payload-that-is-secret.signature"
        for credential in [Credential.bearer(secret), .authorization(scheme: "Token", secret), .header("X-Sig", value: secret)] {
            var dumped = ""
            dump(credential, to: &dumped)
            for text in [credential.description, credential.debugDescription, String(reflecting: credential), dumped] {
                #expect(!text.contains(secret), "\(text)")
                #expect(!text.contains("payload-that-is-secret"))
            }
        }
    }

    // MARK: 4. Providers see the request; rejections see the response

    @Test func providerThatReadsTheBodySignsThisRequest() async throws {
        let authorizer = try authorizer(rulePolicy(try AuthorizationRule(host: "api.example.com", scheme: "payload")), ["payload": PayloadSigningProvider()])
        let a = try await authorizer.authorize(request("POST", "https://api.example.com/v1/chat?lang=en", headers: ["X-Nonce": "7"], body: #"{"msg":"hi"}"#))
        let b = try await authorizer.authorize(request("POST", "https://api.example.com/v1/chat?lang=en", headers: ["X-Nonce": "7"], body: #"{"msg":"bye"}"#))
        let expected = base64URL(Data(#"POST /v1/chat?lang=en {"msg":"hi"} 7"#.utf8))
        #expect(a.request.value(forHeader: "X-Payload-Signature") == expected)
        #expect(a.request.value(forHeader: "X-Payload-Signature") != b.request.value(forHeader: "X-Payload-Signature"))
    }

    @Test func rejectionHandlerReadsTheJSONErrorBodyAndHeaders() async throws {
        let provider = ErrorBodyReadingProvider()
        let authorizer = try authorizer(rulePolicy(try AuthorizationRule(host: "sdk.braze.com", scheme: "signature")), ["signature": provider])
        let authorized = try await authorizer.authorize(request("POST", "https://sdk.braze.com/api/v3/data"))
        let expired = ServerResponse(statusCode: 401, headers: ["WWW-Authenticate": #"Bearer error="invalid_token""#],
                                     body: Data(#"{"auth_error":{"error_code":22,"reason":"expired"},"user_id":"u1"}"#.utf8))
        #expect(await authorizer.evaluate(expired, to: authorized) == .retry)
        let mismatch = ServerResponse(statusCode: 401, body: Data(#"{"auth_error":{"error_code":21,"reason":"subject"},"user_id":"u1"}"#.utf8))
        #expect(await authorizer.evaluate(mismatch, to: authorized) == .fail(.authorizationRejected(response: mismatch, scheme: "signature")))
        let malformed = ServerResponse(statusCode: 401, body: Data("{\"auth_error\":".utf8))
        #expect(await authorizer.evaluate(malformed, to: authorized) == .fail(.authorizationRejected(response: malformed, scheme: "signature")))
        let seen = provider.seen.withLock { $0 }
        #expect(seen.map(\.code) == [22, 21])
        #expect(seen.first?.challenge == #"Bearer error="invalid_token""#)
    }

    // MARK: 5. Rejection attribution and loops

    @Test func rejectionAfterARedirectDroppedTheCredentialIsNotReportedToTheProvider() async throws {
        let provider = ScriptedProvider(.token("good.token"))
        provider.rejectionDecision = .retry
        let authorizer = try authorizer(rulePolicy(try AuthorizationRule(host: "api.example.com", scheme: .bearer)), [.bearer: provider])
        let authorized = try await authorizer.authorize(request("GET", "https://api.example.com/x"))
        let hopped = try #require(try authorizer.redirect(authorized, after: ServerResponse(statusCode: 302, headers: ["Location": "https://other.example/y"])))
        #expect(!hopped.carriesCredential)
        let rejected = ServerResponse(statusCode: 401)
        #expect(await authorizer.evaluate(rejected, to: hopped) == .fail(.authorizationRejected(response: rejected, scheme: .bearer)))
        #expect(provider.rejections.isEmpty)
    }

    @Test func aCredentialRevokedForGoodEndsInRefreshWindowExceededAndTheWindowOpensAgainWhenItPasses() async throws {
        // Every refresh gives a new token, and the server rejects every one of them.
        let provider = ScriptedProvider((1...20).map { .token("refreshed.token.\($0)") })
        provider.rejectionDecision = .retry
        let options = AuthorizationOptions(refreshWindow: AuthorizationOptions.RefreshWindow(maximumRefreshes: 3, interval: 30))
        let authorizer = try authorizer(rulePolicy(try AuthorizationRule(host: "api.example.com", scheme: .bearer)), [.bearer: provider], options: options)
        let transport = RecordingTransport(statusCode: 401)
        let client = AuthorizedHTTPClient(authorizer: authorizer, transport: transport)
        var codes: [RequestError.Code] = []
        for _ in 0..<5 {
            do { _ = try await client.send(request("GET", "https://api.example.com/x")) } catch { codes.append(error.code) }
        }
        #expect(codes == [.authorizationRejected, .authorizationRejected, .authorizationRejected, .refreshWindowExceeded, .refreshWindowExceeded])
        #expect(transport.requests.count == 3 * 2 + 2)     // three refreshed requests, then one try each
        #expect(sink.messages(at: .warning).contains { $0.contains("after 3 refreshes within 30.0 seconds") })
        clock.advance(by: 30)
        transport.clear()
        do { _ = try await client.send(request("GET", "https://api.example.com/x")) } catch { codes.append(error.code) }
        #expect(codes.last == .authorizationRejected)
        #expect(transport.requests.count == 2)
    }

    // MARK: 8. URLSession users

    @Test func aURLRequestIsAuthorizedInOneCall() async throws {
        let policy = rulePolicy(try AuthorizationRule(host: "api.example.com", path: "/v1/**", scheme: .bearer))
        let authorizer = try authorizer(policy, [.bearer: ScriptedProvider(.token("url.request.jwt"))])
        var urlRequest = URLRequest(url: URL(string: "https://api.example.com/v1/me?fields=name")!)
        urlRequest.setValue("application/json", forHTTPHeaderField: "Accept")
        let authorized = try await authorizer.authorize(urlRequest)
        #expect(authorized.value(forHTTPHeaderField: "Authorization") == "Bearer url.request.jwt")
        #expect(authorized.value(forHTTPHeaderField: "Accept") == "application/json")
        #expect(authorized.url == urlRequest.url)
        let elsewhere = try await authorizer.authorize(URLRequest(url: URL(string: "https://cdn.example.com/v1/me")!))
        #expect(elsewhere.value(forHTTPHeaderField: "Authorization") == nil)
    }

    @Test func aURLRequestsOwnAuthorizationFieldInAnotherCaseIsReplacedNotDoubled() async throws {
        let policy = rulePolicy(try AuthorizationRule(host: "api.example.com", scheme: .bearer))
        let authorizer = try authorizer(policy, [.bearer: ScriptedProvider(.token("url.request.jwt"))])
        var urlRequest = URLRequest(url: URL(string: "https://api.example.com/v1/me")!)
        urlRequest.httpMethod = "POST"
        urlRequest.httpBody = Data("{}".utf8)
        // As a whole: `setValue` would store the name in its canonical case on Linux.
        urlRequest.allHTTPHeaderFields = ["authorization": "Bearer stale", "Content-Type": "application/json"]
        let authorized = try await authorizer.authorize(urlRequest)
        let fields = authorized.allHTTPHeaderFields ?? [:]
        #expect(fields.filter { $0.key.lowercased() == "authorization" }.map(\.value) == ["Bearer url.request.jwt"])
        #expect(authorized.value(forHTTPHeaderField: "Content-Type") == "application/json")
        #expect(authorized.httpMethod == "POST")
        #expect(authorized.httpBody == Data("{}".utf8))
    }

    // MARK: 10. Redirects

    @Test func crossOriginRedirectDropsEveryCredentialHeaderAndTheSensitiveOnes() async throws {
        let provider = ScriptedProvider(.credential(.header("X-Braze-Auth-Signature", value: "sig")))
        // Every header the forwarded list may name is named, so the credential and sensitive rules are what drop them
        // (`Cookie` and `Proxy-Authorization` belong to the transport and can never be listed).
        let authorizer = try authorizer(rulePolicy(try AuthorizationRule(host: "api.example.com", scheme: "signature")), ["signature": provider],
                                        options: AuthorizationOptions(sensitiveHeaderNames: ["X-Session-Id"],
                                                                      forwardedHeaderNames: ["X-Braze-Auth-Signature", "Authorization", "X-Session-Id"]))
        let authorized = try await authorizer.authorize(request("GET", "https://api.example.com/x", headers: [
            "Authorization": "Basic Zm9vOmJhcg==", "Cookie": "s=1", "Proxy-Authorization": "Basic eA==", "x-session-id": "42", "Accept": "*/*",
        ]))
        let same = try #require(try authorizer.redirect(authorized, after: ServerResponse(statusCode: 302, headers: ["Location": "/y"])))
        #expect(same.request.headers.count == 6)
        #expect(same.carriesCredential)
        let other = try #require(try authorizer.redirect(same, after: ServerResponse(statusCode: 302, headers: ["Location": "https://api.example.com:8443/z"])))
        #expect(other.request.headers == ["Accept": "*/*"])
        #expect(other.redirectCount == 2)
    }

    @Test(arguments: ["ftp://api.example.com/x", "file:///etc/passwd", "javascript:alert(1)", "data:text/plain,x"])
    func redirectToAnotherSchemeIsRefused(location: String) async throws {
        let authorizer = try authorizer(rulePolicy(), [:])
        let authorized = try await authorizer.authorize(request("GET", "https://api.example.com/x"))
        #expect(throws: RequestError.redirectRefused("", response: ServerResponse(statusCode: 302))) {
            try authorizer.redirect(authorized, after: ServerResponse(statusCode: 302, headers: ["Location": location]))
        }
    }

    @Test func redirectLimitIsConfigurable() async throws {
        let transport = RecordingTransport(statusCode: 302, headers: ["Location": "/again"])
        let authorizer = try authorizer(rulePolicy(), [:], options: AuthorizationOptions(redirectLimit: 2))
        await #expect(throws: RequestError.tooManyRedirects(limit: 2)) {
            try await AuthorizedHTTPClient(authorizer: authorizer, transport: transport).send(request("GET", "https://api.example.com/x"))
        }
        #expect(transport.requests.count == 3)
    }

    @Test(arguments: [
        AuthorizationOptions(refreshWindow: AuthorizationOptions.RefreshWindow(maximumRefreshes: 0)), AuthorizationOptions(refreshWindow: AuthorizationOptions.RefreshWindow(interval: 0)),
        AuthorizationOptions(refreshWindow: AuthorizationOptions.RefreshWindow(interval: .infinity)), AuthorizationOptions(redirectLimit: -1),
        AuthorizationOptions(redirectLimit: 21), AuthorizationOptions(sensitiveHeaderNames: ["Bad Name"]),
        AuthorizationOptions(requestDeadline: 0), AuthorizationOptions(requestDeadline: .nan), AuthorizationOptions(requestDeadline: 1e300),
    ])
    func optionsOutOfRangeAreRefused(options: AuthorizationOptions) {
        #expect(throws: ConfigurationError.self) { try RequestAuthorizer(policy: AuthorizationPolicy(), providers: [:], options: options) }
    }
}
