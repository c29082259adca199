import Foundation
import SDKAuthorizationTesting
import Testing
import TestSupport
@testable import SDKAuthorization
import SDKAuthorizationModeKit

/// A redirect within the origin is authorized by the policy for the hop's own path, as that request
/// sent directly would be: a credential scoped to some paths never follows a hop out of them.
@Suite("Path scope on redirects within the origin", .hangLimit)
struct RedirectPathScopeTests {
    let apiURL = URL(string: "https://api.example.com/api/items")!

    /// `/api/**` gets the bearer token, `/partner/**` a partner header, nothing else on the host a credential.
    func authorizer(bearer: ScriptedProvider = ScriptedProvider(.token("api-token")),
                    partner: ScriptedProvider = ScriptedProvider(.credential(.header("X-Partner-Key", value: "partner-key"))),
                    observer: RecordingEventObserver? = nil) throws -> RequestAuthorizer {
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(host: "api.example.com", path: "/api/**", scheme: .bearer))
        policy.add(try AuthorizationRule(host: "api.example.com", path: "/partner/**", scheme: "partner"))
        return try RequestAuthorizer(policy: policy, providers: [.bearer: bearer, "partner": partner],
                                     diagnostics: RecordingDiagnosticsSink(), observer: observer)
    }

    /// Sends `request` through a stack that answers the first send with `status` to `location` and
    /// every other with 200; returns what each send carried.
    func hops(_ authorizer: RequestAuthorizer, _ request: OutgoingRequest, endpoint: Endpoint.ID? = nil,
              status: Int = 307, to location: String) async throws -> [OutgoingRequest] {
        let sent = Locked<[OutgoingRequest]>([])
        _ = try await authorizer.send(request, endpoint: endpoint) { request in
            let count = sent.withLock { $0.append(request); return $0.count }
            return count == 1 ? ServerResponse(statusCode: status, headers: ["Location": location]) : ServerResponse(statusCode: 200)
        }
        return sent.withLock { $0 }
    }

    @Test(arguments: [301, 302, 303, 307, 308])
    func aHopToAPathNoRuleNamesCarriesNoBearerToken(status: Int) async throws {
        let bearer = ScriptedProvider(.token("api-token"))
        let observer = RecordingEventObserver()
        let authorizer = try authorizer(bearer: bearer, observer: observer)
        // Asked for directly, the path gets no credential.
        #expect(try await authorizer.authorize(OutgoingRequest(method: "POST", url: try #require(URL(string: "https://api.example.com/upload")))).carriesCredential == false)

        let sent = try await hops(authorizer, OutgoingRequest(method: "POST", url: apiURL, body: Data("{}".utf8)), status: status, to: "/upload")
        #expect(sent.count == 2)
        #expect(sent.first?.value(forHeader: "Authorization") == "Bearer api-token")
        #expect(sent.last?.url.path == "/upload")
        #expect(sent.last?.value(forHeader: "Authorization") == nil)
        #expect(bearer.requestedContexts.count == 1)
        #expect(observer.events.contains { $0.kind == .redirectCredentialDropped })
    }

    @Test func aHopToAPathUnderAnotherRuleGetsThatRulesCredentialAndNotTheFirstOne() async throws {
        let bearer = ScriptedProvider(.token("api-token"))
        let partner = ScriptedProvider(.credential(.header("X-Partner-Key", value: "partner-key")))
        let authorizer = try authorizer(bearer: bearer, partner: partner)
        let sent = try await hops(authorizer, OutgoingRequest(method: "PUT", url: apiURL, body: Data("{}".utf8)), to: "/partner/upload")
        #expect(sent.last?.url.path == "/partner/upload")
        #expect(sent.last?.value(forHeader: "Authorization") == nil)
        #expect(sent.last?.value(forHeader: "X-Partner-Key") == "partner-key")
        #expect(partner.requestedContexts.map(\.url.path) == ["/partner/upload"])
        #expect(partner.requestedContexts.map(\.attempt) == [1])
        #expect(bearer.requestedContexts.count == 1)
    }

    /// A hop to another path of the same rule keeps the token it has, and asks nothing more.
    @Test func aHopWithinTheSameRulesPathsKeepsItsTokenWithoutAskingAgain() async throws {
        let bearer = ScriptedProvider(.token("api-token"), .token("second"))
        let authorizer = try authorizer(bearer: bearer)
        let sent = try await hops(authorizer, OutgoingRequest(method: "GET", url: apiURL), to: "/api/other/./page")
        #expect(sent.map { $0.value(forHeader: "Authorization") } == ["Bearer api-token", "Bearer api-token"])
        #expect(bearer.requestedContexts.count == 1)
    }

    /// A hop never gains a credential its request did not carry, even to a path the policy authorizes.
    @Test func aHopFromAPathWithoutCredentialGainsNone() async throws {
        let bearer = ScriptedProvider(.token("api-token"))
        let authorizer = try authorizer(bearer: bearer)
        let sent = try await hops(authorizer, OutgoingRequest(method: "GET", url: try #require(URL(string: "https://api.example.com/public"))), to: "/api/items")
        #expect(sent.map { $0.value(forHeader: "Authorization") } == [nil, nil])
        #expect(bearer.requestedContexts.isEmpty)
    }

    /// A catalogue endpoint's credential is the endpoint's: a hop to a path it does not name (and no
    /// rule names) gets neither a token nor a proof.
    @Test func aCatalogueEndpointsHopToAPathItDoesNotNameGetsNoFreshTokenOrProof() async throws {
        let provider = ScriptedProvider(.credential(Credential.authorization(scheme: "DPoP", "t").adding("DPoP", value: "proof")))
        var policy = AuthorizationPolicy()
        try policy.add(Endpoint("upload", method: "POST", path: "/api/upload"), scheme: .bearer)
        let authorizer = try RequestAuthorizer(policy: policy, providers: [.bearer: provider], baseURL: URL(string: "https://api.example.com"),
                                               diagnostics: RecordingDiagnosticsSink())
        let request = try authorizer.request(for: "upload", body: Data("{}".utf8))
        // Asked for directly, the path is no endpoint's and gets nothing.
        #expect(authorizer.scheme(for: OutgoingRequest(method: "POST", url: try #require(URL(string: "https://api.example.com/partner/upload")))).scheme == .none)

        let sent = try await hops(authorizer, request, endpoint: "upload", to: "/partner/upload")
        #expect(sent.count == 2)
        #expect(sent.last?.value(forHeader: "Authorization") == nil)
        #expect(sent.last?.value(forHeader: "DPoP") == nil)
        #expect(provider.requestedContexts.map(\.url.path) == ["/api/upload"])
    }

    /// A catalogue endpoint's hop to a path under a rule of another scheme gets that rule's
    /// credential, never the endpoint's.
    @Test func aCatalogueEndpointsHopToAPathUnderARuleGetsTheRulesCredential() async throws {
        let endpointProvider = ScriptedProvider(.credential(Credential.authorization(scheme: "DPoP", "t").adding("DPoP", value: "proof")))
        let partner = ScriptedProvider(.credential(.header("X-Partner-Key", value: "partner-key")))
        var policy = AuthorizationPolicy()
        try policy.add(Endpoint("upload", method: "POST", path: "/api/upload"), scheme: .bearer)
        policy.add(try AuthorizationRule(host: "api.example.com", path: "/partner/**", scheme: "partner"))
        let authorizer = try RequestAuthorizer(policy: policy, providers: [.bearer: endpointProvider, "partner": partner],
                                               baseURL: URL(string: "https://api.example.com"), diagnostics: RecordingDiagnosticsSink())
        let sent = try await hops(authorizer, try authorizer.request(for: "upload", body: Data("{}".utf8)), endpoint: "upload", to: "/partner/upload")
        #expect(sent.last?.value(forHeader: "X-Partner-Key") == "partner-key")
        #expect(sent.last?.value(forHeader: "Authorization") == nil)
        #expect(sent.last?.value(forHeader: "DPoP") == nil)
        #expect(endpointProvider.requestedContexts.map(\.url.path) == ["/api/upload"])
        #expect(partner.requestedContexts.map(\.url.path) == ["/partner/upload"])
    }

    /// The same endpoint path behind a redirect (a trailing slash, a canonical spelling) gets the
    /// endpoint's provider again, for the new URL.
    @Test func aCatalogueEndpointsHopToItsOwnPathGetsAProofForTheNewURL() async throws {
        let provider = ScriptedProvider(.credential(Credential.authorization(scheme: "DPoP", "t").adding("DPoP", value: "proof")))
        var policy = AuthorizationPolicy()
        try policy.add(Endpoint("upload", method: "POST", path: "/api/upload"), scheme: .bearer)
        let authorizer = try RequestAuthorizer(policy: policy, providers: [.bearer: provider], baseURL: URL(string: "https://api.example.com"),
                                               diagnostics: RecordingDiagnosticsSink())
        let sent = try await hops(authorizer, try authorizer.request(for: "upload", body: Data("{}".utf8)), endpoint: "upload", to: "/api/upload/")
        #expect(sent.map { $0.value(forHeader: "DPoP") } == ["proof", "proof"])
        #expect(provider.requestedContexts.map(\.url.path) == ["/api/upload", "/api/upload"])
    }

    // MARK: Paths a server resolves elsewhere

    /// Paths that some common server (Tomcat and Spring: `..;`; a server that decodes before it splits
    /// or resolves: `%2f`, `%2e`; IIS: `\`, `%5c`; nginx: `//` before `..`; a server that decodes
    /// twice: `%25`) resolves outside `/v1`, while a matcher that takes them literally keeps them in.
    static let resolvedElsewhere = [
        "/v1/..;/admin", "/v1/..;x=1/admin", "/v1/..%2fadmin", "/v1/..%2Fadmin", "/v1/%2e%2e/admin", "/v1/%2E%2E/admin",
        "/v1/.%2e/admin", "/v1/%2e./admin", "/v1/..%5cadmin", "/v1/..%5Cadmin", "/v1/..\\admin", "/v1/%5c..%5cadmin",
        "https://api.example.com/v1//../admin", "/v1/%252e%252e/admin", "/v1/%252E%252E/admin", "/v1/%c0%ae%c0%ae/admin", "/v1/.../admin",
    ]

    func v1Authorizer() throws -> RequestAuthorizer {
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(host: "api.example.com", path: "/v1/**", scheme: .bearer))
        return try RequestAuthorizer(policy: policy, providers: [.bearer: ScriptedProvider(.token("v1-token"))], diagnostics: RecordingDiagnosticsSink())
    }

    enum Outcome: Equatable { case refused, withoutCredential, withCredential }

    /// Each form is refused (`..;`, `%2f`, `%5c`, `\\`, a double encoding: the matcher cannot know
    /// which server's reading is right, so the credential goes to none of them) or resolved as
    /// every server resolves it (`%2e%2e` is `..`: the path is `/admin`, which no rule names), and
    /// the hop ends as the same request asked for directly does: never with the `/v1` token.
    @Test(arguments: resolvedElsewhere)
    func aHopToAPathAServerResolvesOutsideTheRuleEndsAsTheDirectRequestDoesWithoutTheToken(location: String) async throws {
        let authorizer = try v1Authorizer()
        let authorized = try await authorizer.authorize(OutgoingRequest(method: "GET", url: try #require(URL(string: "https://api.example.com/v1/items"))))
        #expect(authorized.carriesCredential)
        let hop: Outcome
        do {
            let next = try #require(try authorizer.redirect(authorized, after: ServerResponse(statusCode: 307, headers: ["Location": location])))
            hop = next.request.value(forHeader: "Authorization") == nil && !next.carriesCredential ? .withoutCredential : .withCredential
            #expect(!next.needsNewCredential)
        } catch let error as RequestError {
            #expect(error.code == .ambiguousPath)
            #expect(!"\(error)".contains("v1-token"))
            hop = .refused
        }
        let direct: Outcome
        let url = try #require(URL(string: location, relativeTo: authorized.request.url)?.absoluteURL)
        do {
            direct = try await authorizer.authorize(OutgoingRequest(method: "GET", url: url)).carriesCredential ? .withCredential : .withoutCredential
        } catch {
            #expect(error.code == .ambiguousPath)
            direct = .refused
        }
        #expect(hop != .withCredential)
        #expect(hop == direct)
    }

    @Test(arguments: resolvedElsewhere)
    func theRequestLoopSendsNoHopToAPathAServerResolvesOutsideTheRule(location: String) async throws {
        do {
            let sent = try await hops(try v1Authorizer(), OutgoingRequest(method: "GET", url: try #require(URL(string: "https://api.example.com/v1/items"))), to: location)
            #expect(sent.count == 2)
            #expect(sent.last?.value(forHeader: "Authorization") == nil)
        } catch let error as RequestError {
            #expect(error.code == .ambiguousPath)
            #expect(error.wasSent)
        }
    }

    /// Dot segments every server resolves alike are matched as resolved: out of scope means no
    /// credential (nothing to refuse); still in scope keeps it.
    @Test(arguments: [("/v1/../admin", false), ("https://api.example.com/v1/x/../../admin", false), ("/v1/./items/../other", true), ("/v1//items", true)])
    func dotSegmentsEveryServerResolvesAlikeAreMatchedAsResolved(location: String, keepsToken: Bool) async throws {
        let authorizer = try v1Authorizer()
        let authorized = try await authorizer.authorize(OutgoingRequest(method: "GET", url: try #require(URL(string: "https://api.example.com/v1/items"))))
        let next = try #require(try authorizer.redirect(authorized, after: ServerResponse(statusCode: 302, headers: ["Location": location])))
        #expect((next.request.value(forHeader: "Authorization") == "Bearer v1-token") == keepsToken)
        #expect(next.carriesCredential == keepsToken)
        #expect(!next.needsNewCredential)
    }
}
