import Foundation
import SDKAuthorizationTesting
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationEngagement

@Suite("Paths a server resolves outside a rule's scope", .hangLimit)
struct AmbiguousPathTests {
    /// Paths this matcher places under `/v1/` that a common server resolves to `/admin` (or reads
    /// ambiguously): Tomcat and Spring drop `;` parameters, IIS and Spring take `\` for `/`, nginx
    /// merges `//` before resolving `..`, Windows drops trailing blanks, some decoders decode twice,
    /// accept overlong UTF-8 or IIS's `%u`, or stop at NUL.
    static let spellingsOutsideTheScope = [
        "/v1/..;/admin",
        "/v1/..;jsessionid=1/admin",
        "/v1/.;/../admin",
        "/v1/..%3b/admin",
        "/v1/..%2fadmin",
        "/v1/..%2Fadmin",
        "/v1/..%5cadmin",
        "/v1/..%5Cadmin",
        "/v1/..\\admin",
        "/v1/%252e%252e/admin",
        "/v1/..%252fadmin",
        "/v1/%c0%ae%c0%ae/admin",
        "/v1/..%c0%afadmin",
        "/v1/%e0%80%ae%e0%80%ae/admin",
        "/v1/x/%2e%2e/..;/admin",
        "/v1/x/.%2e/..%2fadmin",
        "/v1/%2e%2e%3b/admin",
        "/v1//../admin",
        "/v1/..%20/admin",
        "/v1/%u002e%u002e/admin",
        "/v1/..%00/admin",
    ]

    /// Paths every server resolves inside `/v1/`.
    static let ordinaryPaths = [
        "/v1/users/42", "/v1/a%20b", "/v1/caf%C3%A9", "/v1/users/../42", "/v1/./users", "/v1/a;b=c/x", "/v1/100%25", "/v1/%41",
        "/v1/users/", "/v1/~user/x.json", "/v1", "/v1/.well-known/x", "/v1/a..b",
    ]

    let rule: AuthorizationRule

    init() throws {
        rule = try AuthorizationRule(host: "api.example.com", path: "/v1/**", scheme: .bearer)
    }

    func authorizer(_ rules: [AuthorizationRule], _ provider: ScriptedProvider) throws -> RequestAuthorizer {
        var policy = AuthorizationPolicy()
        for rule in rules { policy.add(rule) }
        return try RequestAuthorizer(policy: policy, providers: [.bearer: provider], diagnostics: RecordingDiagnosticsSink())
    }

    func request(_ path: String, method: String = "GET") throws -> OutgoingRequest {
        OutgoingRequest(method: method, url: try #require(URL(string: "https://api.example.com\(path)")))
    }

    @Test(arguments: spellingsOutsideTheScope)
    func aPathScopedRuleRefusesAPathAServerMayResolveOutsideIt(path: String) async throws {
        let request = try request(path)
        // The matcher alone places it in scope: the refusal is what keeps the credential home.
        #expect(rule.matches(request))
        let provider = ScriptedProvider(.token("tok"))
        let authorizer = try authorizer([rule], provider)
        await #expect(throws: RequestError.ambiguousPath(method: "GET", url: request.url, scope: "/v1/**", scheme: .bearer)) {
            try await authorizer.authorize(request)
        }
        #expect(provider.requestedContexts.isEmpty)
    }

    @Test(arguments: ordinaryPaths)
    func aPathScopedRuleStillAuthorizesOrdinaryPaths(path: String) async throws {
        let authorizer = try authorizer([rule], ScriptedProvider(.token("tok")))
        let authorized = try await authorizer.authorize(request(path))
        #expect(authorized.carriesCredential)
        #expect(authorized.request.value(forHeader: "Authorization") == "Bearer tok")
    }

    @Test func theRefusalNamesTheRequestWithoutItsUserInformationQueryOrCredential() async throws {
        let request = OutgoingRequest(method: "post", url: try #require(URL(string: "https://alice:pa55word@api.example.com/v1/..;/admin?api_key=s3cret")),
                                      headers: ["X-Secret": "hush"])
        let provider = ScriptedProvider(.token("tok"))
        let authorizer = try authorizer([AuthorizationRule(host: "api.example.com", path: "/v1/**", scheme: .bearer)], provider)
        await #expect {
            try await authorizer.authorize(request)
        } throws: { error in
            guard let error = error as? RequestError, error.code == .ambiguousPath, error.scheme == .bearer, !error.wasSent else { return false }
            let text = "\(error) \(String(reflecting: error)) \(error.localizedDescription)"
            return error.description.hasPrefix("POST https://api.example.com/v1/..;/admin") && error.description.contains("'/v1/**'")
                && !text.contains("alice") && !text.contains("pa55word") && !text.contains("s3cret") && !text.contains("api_key") && !text.contains("hush")
        }
        #expect(provider.requestedContexts.isEmpty)
    }

    @Test(arguments: ["/v1/..;/admin", "/v1/..%2fadmin", "/admin/..%5c..%5cx"])
    func aRuleForTheWholeHostStillAuthorizesAnyPath(path: String) async throws {
        let authorizer = try authorizer([AuthorizationRule(host: "api.example.com", scheme: .bearer)], ScriptedProvider(.token("tok")))
        let authorized = try await authorizer.authorize(request(path))
        #expect(authorized.request.value(forHeader: "Authorization") == "Bearer tok")
    }

    @Test func aPathThatTakesNoCredentialIsSentAsItIs() async throws {
        let provider = ScriptedProvider(.token("tok"))
        let authorizer = try authorizer([AuthorizationRule(host: "api.example.com", path: "/public/**", scheme: .none), rule], provider)
        for path in ["/public/..;/v1/x", "/v2/..;/admin"] {
            let authorized = try await authorizer.authorize(request(path))
            #expect(!authorized.carriesCredential, "\(path)")
            #expect(authorized.request.value(forHeader: "Authorization") == nil, "\(path)")
        }
        #expect(provider.requestedContexts.isEmpty)
    }

    @Test(arguments: ["/track/v2/projects/project-1/%2e/customers", "/track/v2/projects/..;/customers", "/track/v2/projects/..%2f..%2fadmin/customers"])
    func aCatalogueEndpointMatchedByItsPathRefusesAPathAServerMayResolveElsewhere(path: String) async throws {
        let provider = ScriptedProvider(.credential(.authorization(scheme: "Token", "key")))
        let authorizer = try RequestAuthorizer(policy: .engagement(advancedAuthEnabled: false), providers: [.apiKey: provider],
                                               baseURL: URL(string: "https://api.example.com"), pathParameters: ["projectToken": "project-1"],
                                               diagnostics: RecordingDiagnosticsSink())
        let request = try request(path, method: "POST")
        #expect(authorizer.scheme(for: request).endpoint == .trackCustomers)
        await #expect {
            try await authorizer.authorize(request)
        } throws: { error in
            (error as? RequestError)?.code == .ambiguousPath && (error as? RequestError)?.endpoint == .trackCustomers
        }
        #expect(provider.requestedContexts.isEmpty)
    }

    @Test func aCatalogueRequestNamedByItsEndpointKeepsAParameterHoldingASlash() async throws {
        var policy = AuthorizationPolicy()
        try policy.add(Endpoint("userInbox", method: "GET", path: "/v2/users/<userId>/inbox"), scheme: .bearer)
        let authorizer = try RequestAuthorizer(policy: policy, providers: [.bearer: ScriptedProvider(.token("tok"))],
                                               baseURL: URL(string: "https://api.example.com"), diagnostics: RecordingDiagnosticsSink())
        let request = try authorizer.request(for: "userInbox", parameters: ["userId": "a/b"])
        #expect(request.url.absoluteString == "https://api.example.com/v2/users/a%2Fb/inbox")
        // Its URL was built from the endpoint, so the endpoint is known without matching the path.
        let authorized = try await authorizer.authorize(request, endpoint: "userInbox")
        #expect(authorized.request.value(forHeader: "Authorization") == "Bearer tok")
        // Matched by its path alone, the same URL is one a server may resolve elsewhere.
        await #expect(throws: RequestError.ambiguousPath(method: "GET", url: request.url, scope: "/v2/users/<userId>/inbox", scheme: .bearer, endpoint: "userInbox")) {
            try await authorizer.authorize(request)
        }
    }

    @Test func aRequestSentThroughTheLoopIsRefusedBeforeTheTransport() async throws {
        let authorizer = try authorizer([rule], ScriptedProvider(.token("tok")))
        var sent = 0
        await #expect {
            _ = try await authorizer.send(try request("/v1/..%2fadmin"), through: { _ in
                sent += 1
                return ServerResponse(statusCode: 200)
            })
        } throws: { error in
            (error as? RequestError)?.code == .ambiguousPath
        }
        #expect(sent == 0)
    }
}
