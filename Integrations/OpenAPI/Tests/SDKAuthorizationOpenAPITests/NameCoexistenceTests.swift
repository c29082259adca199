// This file imports SDKAuthorization and SDKAuthorizationEngagement beside swift-http-types,
// swift-openapi-runtime and swift-openapi-urlsession and uses all their names unqualified: it
// compiles only while none of the framework's public names (nor the middleware's) clashes with
// theirs (HTTPRequest, HTTPResponse, URLSessionTransport, ClientMiddleware, ...).
import Foundation
import HTTPTypes
import OpenAPIRuntime
import OpenAPIURLSession
import SDKAuthorization
import SDKAuthorizationEngagement
import SDKAuthorizationOpenAPI
import SDKAuthorizationTesting
import Testing

@Suite("Names beside HTTPTypes, OpenAPIRuntime and OpenAPIURLSession", .timeLimit(.minutes(3)))
struct NameCoexistenceTests {
    @Test func ecosystemFrameworkAndMiddlewareNamesAreUsedUnqualifiedInOneFile() async throws {
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

        // The middleware, unqualified, as a generated client takes it.
        let middlewares: [any ClientMiddleware] = [AuthorizationMiddleware(authorizer: authorizer)]
        #expect(middlewares.count == 1)
    }
}
