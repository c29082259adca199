import Foundation
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationEngagement

@Suite("Endpoint catalogue and scheme table", .hangLimit)
struct AuthorizationPolicyTests {
    private let base = URL(string: "https://api.example.com")!

    @Test func defaultTableHasTheNineEndpointsWithTheirSchemes() {
        let off = AuthorizationPolicy.engagement(advancedAuthEnabled: false)
        let on = AuthorizationPolicy.engagement(advancedAuthEnabled: true)
        #expect(off.endpoints.count == 9)
        #expect(off.endpoints(using: .apiKey).count == 9)
        #expect(on.endpoints(using: .bearer) == [.appInboxFetch, .appInboxMarkAsRead])
        #expect(on.endpoints(using: .apiKey).count == 7)
        #expect(on.endpoints.allSatisfy { $0.method == "POST" })
    }

    @Test func projectTokenIsPercentEncodedInPathAndQuery() throws {
        let policy = AuthorizationPolicy.engagement(advancedAuthEnabled: false)
        let token = "a/b?c&d=e f#g"
        let path = try #require(try policy.endpoint(.trackCustomers)?.url(baseURL: base, parameters: ["projectToken": token]))
        #expect(path.absoluteString == "https://api.example.com/track/v2/projects/a%2Fb%3Fc&d=e%20f%23g/customers")
        #expect(path.pathComponents.count == 6)
        let query = try #require(try policy.endpoint(.selfCheckNotification)?.url(baseURL: base, parameters: ["projectToken": token]))
        let items = URLComponents(url: query, resolvingAgainstBaseURL: false)?.queryItems
        #expect(items == [URLQueryItem(name: "project_id", value: token)])
    }

    @Test func baseURLPathIsKeptInFrontOfTheEndpointPath() throws {
        let url = try #require(try AuthorizationPolicy.engagement(advancedAuthEnabled: false).endpoint(.inAppMessages)?
            .url(baseURL: URL(string: "http://127.0.0.1:8080/api/")!, parameters: ["projectToken": "p1"]))
        #expect(url.absoluteString == "http://127.0.0.1:8080/api/webxp/s/p1/inappmessages?v=1")
    }

    @Test func addingADuplicateOrMovingAnUnknownEndpointFails() {
        var policy = AuthorizationPolicy.engagement(advancedAuthEnabled: false)
        #expect(throws: ConfigurationError.duplicateEndpoint("trackEvents")) {
            try policy.add(Endpoint(.trackEvents, path: "/x"), scheme: .apiKey)
        }
        #expect(throws: ConfigurationError.unknownEndpoint("segments")) {
            try policy.setScheme(.bearer, for: "segments")
        }
    }

    @Test func absoluteEndpointOnAnotherHostIsBuiltFromItsOwnURL() throws {
        var policy = AuthorizationPolicy()
        try policy.add(Endpoint("cdn", method: "GET", path: "https://cdn.other.example:8443/v1/<projectToken>/blocks?p=<projectToken>"), scheme: .bearer)
        let url = try #require(try policy.endpoint("cdn")?.url(baseURL: base, parameters: ["projectToken": "a/b"]))
        #expect(url.absoluteString == "https://cdn.other.example:8443/v1/a%2Fb/blocks?p=a%2Fb")
    }

    @Test(arguments: ["relative/path", "", "ftp://files.example/x", "https:///nohost", "/a\r\nb"])
    func endpointTemplateThatCannotMakeAURLIsRefused(template: String) {
        var policy = AuthorizationPolicy()
        #expect(throws: ConfigurationError.self) { try policy.add(Endpoint("bad", path: template), scheme: .apiKey) }
        #expect(policy.endpoints.isEmpty)
    }

    @Test(arguments: ["", "GET /x", "PO\nST", "GÉT"])
    func endpointMethodThatIsNotAnHTTPTokenIsRefused(method: String) {
        var policy = AuthorizationPolicy()
        #expect(throws: ConfigurationError.invalidValue(key: "endpoint bad", reason: "'\(method)' is not an HTTP method")) {
            try policy.add(Endpoint("bad", method: method, path: "/x"), scheme: .apiKey)
        }
    }

    @Test func sdkAuthorCanMoveAndAddEndpoints() throws {
        var policy = AuthorizationPolicy.engagement(advancedAuthEnabled: true)
        try policy.setScheme(.none, for: .consentCategories)
        try policy.add(Endpoint("segments", method: "GET", path: "/webxp/projects/<projectToken>/segments"), scheme: .bearer)
        #expect(policy.scheme(for: .consentCategories) == AuthorizationScheme.none)
        #expect(policy.scheme(for: "segments") == .bearer)
        #expect(policy.endpoints.last?.method == "GET")
    }
}
