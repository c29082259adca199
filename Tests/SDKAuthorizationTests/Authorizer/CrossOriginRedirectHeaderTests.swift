import Foundation
import SDKAuthorizationTesting
import Testing
import TestSupport
@testable import SDKAuthorization

@Suite("Caller headers on redirects", .hangLimit)
struct CrossOriginRedirectHeaderTests {
    let callerHeaders = [
        "X-Api-Key": "caller-secret", "Accept": "application/json", "accept-language": "en", "Accept-Encoding": "gzip",
        "User-Agent": "app/1", "Cache-Control": "no-cache", "Pragma": "no-cache", "If-None-Match": "\"e1\"",
        "If-Modified-Since": "Tue, 24 Nov 2026 10:00:00 GMT", "X-Trace": "t-1", "Content-Language": "en",
    ]

    func authorizer(_ options: AuthorizationOptions = AuthorizationOptions()) throws -> RequestAuthorizer {
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(host: "api.example.com", scheme: .bearer))
        return try RequestAuthorizer(policy: policy, providers: [.bearer: ScriptedProvider(.token("tok"))], options: options, diagnostics: RecordingDiagnosticsSink())
    }

    func redirected(_ status: Int, to location: String, method: String = "GET", options: AuthorizationOptions = AuthorizationOptions()) async throws -> AuthorizedRequest {
        let authorizer = try authorizer(options)
        let request = OutgoingRequest(method: method, url: try #require(URL(string: "https://api.example.com/x")), headers: callerHeaders)
        let authorized = try await authorizer.authorize(request)
        return try #require(try authorizer.redirect(authorized, after: ServerResponse(statusCode: status, headers: ["Location": location])))
    }

    @Test(arguments: [301, 302, 303, 307, 308])
    func callerHeaderOutsideTheSafelistDoesNotReachAnotherOrigin(status: Int) async throws {
        let next = try await redirected(status, to: "https://cdn.example.net/y")
        #expect(next.request.value(forHeader: "X-Api-Key") == nil)
        #expect(next.request.value(forHeader: "X-Trace") == nil)
        #expect(next.request.value(forHeader: "Authorization") == nil)
        // Content-Language goes only where a body goes, and this GET has none.
        #expect(next.request.value(forHeader: "Content-Language") == nil)
        #expect(Set(next.request.headers.keys.map { $0.lowercased() }) == [
            "accept", "accept-language", "accept-encoding", "user-agent", "cache-control", "pragma", "if-none-match", "if-modified-since",
        ])
        #expect(next.request.value(forHeader: "Accept") == "application/json")
    }

    @Test(arguments: [301, 302, 303, 307, 308])
    func headerNamedInForwardedHeaderNamesReachesAnotherOrigin(status: Int) async throws {
        let next = try await redirected(status, to: "https://cdn.example.net/y", options: AuthorizationOptions(forwardedHeaderNames: ["x-trace"]))
        #expect(next.request.value(forHeader: "X-Trace") == "t-1")
        #expect(next.request.value(forHeader: "X-Api-Key") == nil)
    }

    @Test func sensitiveHeaderNamesAreDroppedEvenWhenAlsoForwarded() async throws {
        let options = AuthorizationOptions(sensitiveHeaderNames: ["X-Trace", "Accept"], forwardedHeaderNames: ["X-Trace", "Authorization"])
        let next = try await redirected(302, to: "https://cdn.example.net/y", options: options)
        #expect(next.request.value(forHeader: "X-Trace") == nil)
        #expect(next.request.value(forHeader: "Accept") == nil)
        #expect(next.request.value(forHeader: "Authorization") == nil)
        #expect(next.request.value(forHeader: "User-Agent") == "app/1")
    }

    /// The credential header is a custom one the caller's lists name, so nothing but the rule that
    /// every credential header stays home removes it.
    @Test(arguments: [301, 302, 303, 307, 308])
    func aCredentialHeaderTheCallerForwardsNeverFollowsARedirectToAnotherOrigin(status: Int) async throws {
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(host: "api.example.com", scheme: "signature"))
        let authorizer = try RequestAuthorizer(policy: policy, providers: ["signature": ScriptedProvider(.credential(.header("X-Braze-Auth-Signature", value: "sig")))],
                                               options: AuthorizationOptions(forwardedHeaderNames: ["x-braze-auth-signature", "X-Trace"]),
                                               diagnostics: RecordingDiagnosticsSink())
        let request = OutgoingRequest(method: "GET", url: try #require(URL(string: "https://api.example.com/x")), headers: ["X-Trace": "t-1"])
        let authorized = try await authorizer.authorize(request)
        #expect(authorized.request.value(forHeader: "X-Braze-Auth-Signature") == "sig")

        let same = try #require(try authorizer.redirect(authorized, after: ServerResponse(statusCode: status, headers: ["Location": "/y"])))
        #expect(same.request.value(forHeader: "X-Braze-Auth-Signature") == "sig")
        let other = try #require(try authorizer.redirect(same, after: ServerResponse(statusCode: status, headers: ["Location": "https://cdn.example.net/z"])))
        #expect(other.request.value(forHeader: "X-Braze-Auth-Signature") == nil)
        #expect(!other.carriesCredential)
        // The forwarded list works: the header beside it, named the same way, goes on.
        #expect(other.request.value(forHeader: "X-Trace") == "t-1")
    }

    @Test func aCredentialHeaderTheCallerForwardsDoesNotReachAnotherOriginThroughTheLoop() async throws {
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(host: "api.example.com", scheme: "signature"))
        let authorizer = try RequestAuthorizer(policy: policy, providers: ["signature": ScriptedProvider(.credential(.header("X-Braze-Auth-Signature", value: "sig")))],
                                               options: AuthorizationOptions(forwardedHeaderNames: ["X-Braze-Auth-Signature"]),
                                               diagnostics: RecordingDiagnosticsSink())
        let transport = RecordingTransport()
        transport.enqueue(.response(ServerResponse(statusCode: 302, headers: ["Location": "https://cdn.example.net/z"])))
        let response = try await AuthorizedHTTPClient(authorizer: authorizer, transport: transport)
            .send(OutgoingRequest(method: "GET", url: try #require(URL(string: "https://api.example.com/x"))))
        #expect(response.statusCode == 200)
        let sent = transport.requests
        #expect(sent.map(\.url.host) == ["api.example.com", "cdn.example.net"])
        #expect(sent.first?.value(forHeader: "X-Braze-Auth-Signature") == "sig")
        #expect(sent.last?.value(forHeader: "X-Braze-Auth-Signature") == nil)
    }

    @Test(arguments: [301, 302, 303, 307, 308])
    func sameOriginRedirectKeepsEveryHeader(status: Int) async throws {
        let next = try await redirected(status, to: "/y")
        #expect(next.request.headers.count == callerHeaders.count + 1)
        #expect(next.request.value(forHeader: "X-Api-Key") == "caller-secret")
        #expect(next.request.value(forHeader: "Authorization") == "Bearer tok")
    }

    @Test(arguments: ["Bad Name", "", "Host", "Content-Length", "Proxy-Anything", ":path"])
    func forwardedHeaderNamesThatAreNotForwardableAreRefused(name: String) {
        #expect {
            try RequestAuthorizer(policy: AuthorizationPolicy(), providers: [:], options: AuthorizationOptions(forwardedHeaderNames: [name]))
        } throws: { error in
            guard let error = error as? ConfigurationError, error.code == .invalidValue, error.key == "forwardedHeaderNames" else { return false }
            return true
        }
    }
}
