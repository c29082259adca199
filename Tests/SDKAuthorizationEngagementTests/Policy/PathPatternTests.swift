import Foundation
import SDKAuthorizationTesting
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationEngagement

@Suite("Path patterns after dot-segment removal", .hangLimit)
struct PathPatternTests {
    func matches(_ pattern: String, _ path: String) throws -> Bool {
        let rule = try AuthorizationRule(host: "api.example.com", path: pattern, scheme: .bearer)
        return rule.matches(OutgoingRequest(method: "GET", url: try #require(URL(string: "https://api.example.com\(path)"))))
    }

    @Test(arguments: ["/v1/../admin", "/v1/%2e%2e/admin", "/v1/%2E%2E/admin", "/v1/.%2e/admin", "/v1/%2e./admin", "/v1/users/../../admin",
                      "/v1/./../admin", "/v1/.."])
    func dotDotSegmentCannotClimbOutOfARulePath(path: String) throws {
        #expect(try !matches("/v1/**", path))
        #expect(try matches("/admin/**", path) == path.hasSuffix("admin"))
    }

    @Test(arguments: ["/v1/./users", "/v1/%2e/users", "/v1/%2E/users", "/v1/x/../users", "/v1/x/%2E%2E/users", "/./v1/users", "/v1/users/.",
                      "/../v1/users", "/v1/users/x/.."])
    func dotSegmentsAreRemovedBeforeMatching(path: String) throws {
        #expect(try matches("/v1/users", path))
        #expect(try matches("/v1/*", path))
    }

    @Test func aPatternIsNormalizedTheSameWay() throws {
        #expect(try matches("/v1/./x/../users", "/v1/users"))
        #expect(try !matches("/v1/./x/../users", "/v1/x/users"))
    }

    @Test(arguments: [("/a%2Fb", "/a%2Fb"), ("/a%2fb/c", "/a%2Fb/c"), ("/a%00", "/a%00"), ("/x/a%2Fb", "/x/a%2fb")])
    func segmentDecodingToSlashOrNULNeverMatchesALiteral(pattern: String, path: String) throws {
        #expect(try !matches(pattern, path))
    }

    @Test(arguments: [("/v1/caf%C3%A9", "/v1/caf%c3%a9", true), ("/v1/a%20b", "/v1/a b".addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? "", true),
                      ("/v1/<id>", "/v1/a%2Fb", true), ("/v1/<id>", "/v1/%00", true), ("/v1/a", "/v1/%61", true), ("/v1/%zz", "/v1/%zz", true),
                      ("/v1/a", "/v1//a", false), ("/v1/**", "/v1/", true), ("/v1", "/v1/", true)])
    func segmentsComparePercentDecoded(pattern: String, path: String, expected: Bool) throws {
        #expect(try matches(pattern, path) == expected)
    }

    @Test(arguments: ["/track/v2/projects/project-1/x/../customers", "/admin/../track/v2/projects/project-1/customers",
                      "/track/v2/projects/project-1/%2e/customers"])
    func catalogueEndpointsAreMatchedAfterDotSegmentRemoval(path: String) throws {
        let authorizer = try RequestAuthorizer(policy: .engagement(advancedAuthEnabled: false), providers: [.apiKey: ScriptedProvider(.credential(.authorization(scheme: "Token", "key")))],
                                               baseURL: URL(string: "https://api.example.com"), pathParameters: ["projectToken": "project-1"],
                                               diagnostics: RecordingDiagnosticsSink())
        let request = OutgoingRequest(method: "POST", url: try #require(URL(string: "https://api.example.com\(path)")))
        #expect(authorizer.scheme(for: request).endpoint == .trackCustomers)
        let climbing = OutgoingRequest(method: "POST", url: try #require(URL(string: "https://api.example.com/track/v2/projects/project-1/customers/%2E%2E")))
        #expect(authorizer.scheme(for: climbing).endpoint == nil)
    }

    @Test func plainPathsAreMatchedWithoutDecodingExactlyAsDecodedOnes() throws {
        let patterns = ["/", "/v1", "/v1/**", "/v1/*", "/v1/<id>/x", "/v1/users", "/**", "/v1/*/**"].compactMap(PathPattern.init)
        let paths = ["", "/", "/v1", "/v1/", "/v1//", "/v1/users", "/v1/users/", "/v1/a/x", "/v1//x", "/v2/a", "//", "/v1/users/a/b", "/v1/.x", "/v1/x.", "/v1/..x"]
        for pattern in patterns {
            for path in paths {
                #expect(pattern.matches(path) == pattern.matches(RequestPath(path)), "\(pattern) \(path)")
            }
        }
    }
}
