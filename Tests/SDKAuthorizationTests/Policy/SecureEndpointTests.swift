import Foundation
import Testing
import TestSupport
import SDKAuthorization

/// The check a mode makes of a URL it sends secrets to (the token exchange's `tokenExchangeURL`, an
/// outside mode's token URL): one rule for every mode, in the core.
@Suite("Secure endpoint URLs", .hangLimit)
struct SecureEndpointTests {
    @Test(arguments: ["https://auth.example.com/token", "https://auth.example.com:8443/t", "http://127.0.0.1:8080/t", "http://localhost/t", "http://[::1]:9000/t"])
    func anHTTPSURLOrALoopbackHTTPURLIsAnEndpoint(text: String) throws {
        let url = try #require(URL(string: text))
        #expect(ConfigurationError.problem(withSecureEndpoint: url) == nil)
    }

    @Test(arguments: [
        ("http://auth.example.com/t", "'http://auth.example.com/t' uses http, which is allowed only on a loopback host (localhost, 127.0.0.0/8, [::1]); use https"),
        ("https://auth.example.com/t?secret=1", "'https://auth.example.com/t?...' is not an absolute https URL with a host (and no query or fragment)"),
        ("https://auth.example.com/t#f", "'https://auth.example.com/t?...' is not an absolute https URL with a host (and no query or fragment)"),
        ("ftp://auth.example.com/t", "'ftp://auth.example.com/t' is not an absolute https URL with a host (and no query or fragment)"),
        ("/relative", "'/relative' is not an absolute https URL with a host (and no query or fragment)"),
    ])
    func anyOtherURLIsRefusedWithAReasonThatRepeatsNoQuery(text: String, reason: String) throws {
        let url = try #require(URL(string: text))
        #expect(ConfigurationError.problem(withSecureEndpoint: url) == reason)
    }

    @Test func userInfoIsRefusedAndThePasswordNotRepeated() throws {
        let url = try #require(URL(string: "https://user:hunter2@auth.example.com/t"))
        let reason = try #require(ConfigurationError.problem(withSecureEndpoint: url))
        #expect(reason.hasPrefix("user info ('user:password@') is not allowed in"))
        #expect(!reason.contains("hunter2"))
    }
}
