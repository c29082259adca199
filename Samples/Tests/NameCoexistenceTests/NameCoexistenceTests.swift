// This file imports SDKAuthorization beside swift-http-types, swift-openapi-runtime and
// swift-openapi-urlsession and uses all their names unqualified: it compiles only while none of the
// framework's public names clashes with theirs (HTTPRequest, HTTPResponse, URLSessionTransport, ...).
import Foundation
import Synchronization
import HTTPTypes
import OpenAPIRuntime
import OpenAPIURLSession
import SDKAuthorization
import SDKAuthorizationTesting
import Testing

@Suite("Names beside HTTPTypes, OpenAPIRuntime and OpenAPIURLSession")
struct NameCoexistenceTests {
    @Test func ecosystemAndFrameworkNamesAreUsedUnqualifiedInOneFile() async throws {
        // The ecosystem's types, unqualified.
        let request = HTTPRequest(method: .post, scheme: "https", authority: "api.example.com", path: "/v1/chat?lang=en")
        let response = HTTPResponse(status: .unauthorized)
        let transport: any ClientTransport = URLSessionTransport()
        let body: HTTPBody = HTTPBody("{}")
        _ = (transport, body)

        // The framework's types, unqualified, authorizing the HTTPTypes request.
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(host: "api.example.com", path: "/v1/**", scheme: .bearer))
        let authorizer = try RequestAuthorizer(policy: policy, providers: [.bearer: ScriptedProvider(.token("coexisting.jwt"))])
        let outgoing = OutgoingRequest(method: request.method.rawValue, url: try #require(request.url))
        let authorized = try await authorizer.authorize(outgoing)
        var forwarded = request
        for (name, value) in authorized.request.headers {
            if let field = HTTPField.Name(name) { forwarded.headerFields[field] = value }
        }
        #expect(forwarded.headerFields[.authorization] == "Bearer coexisting.jwt")

        let evaluation = await authorizer.evaluate(ServerResponse(statusCode: response.status.code), to: authorized)
        #expect(evaluation == .fail(.authorizationRejected(status: 401, scheme: .bearer, body: Data())))
        let _: any HTTPTransport = URLSessionHTTPTransport()
    }

    @Test func openAPIMiddlewareAuthorizesEachOperationAndRetriesOnceAfterARejection() async throws {
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(host: "api.example.com", path: "/v1/**", scheme: .bearer))
        let provider = ScriptedProvider(.token("old.jwt"), .token("new.jwt"))
        provider.rejectionDecision = .retry
        let authorizer = try RequestAuthorizer(policy: policy, providers: [.bearer: provider])
        let middleware = AuthorizationMiddleware(authorizer: authorizer)
        let seen = SeenRequests()
        let request = HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/v1/messages")
        let (response, _) = try await middleware.intercept(request, body: HTTPBody(#"{"text":"hi"}"#), baseURL: URL(string: "https://api.example.com")!,
                                                           operationID: "sendMessage") { request, body, _ in
            var bytes: Data?
            if let body { bytes = try await Data(collecting: body, upTo: 1024) }
            let count = seen.append(request.headerFields[.authorization], bytes)
            return (HTTPResponse(status: count == 1 ? .unauthorized : .ok), nil)
        }
        #expect(response.status == .ok)
        #expect(seen.values.map(\.authorization) == ["Bearer old.jwt", "Bearer new.jwt"])
        #expect(seen.values.allSatisfy { $0.body == Data(#"{"text":"hi"}"#.utf8) })
        #expect(provider.requestedContexts.first?.request.body == Data(#"{"text":"hi"}"#.utf8))
    }
}

final class SeenRequests: Sendable {
    private let storage = Mutex<[(authorization: String?, body: Data?)]>([])
    func append(_ authorization: String?, _ body: Data?) -> Int {
        storage.withLock { $0.append((authorization, body)); return $0.count }
    }
    var values: [(authorization: String?, body: Data?)] { storage.withLock { $0 } }
}
