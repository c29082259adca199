import Foundation
import SDKAuthorization
import SDKAuthorizationModeKit
import SDKAuthorizationTesting
import Testing
import TestSupport

/// The kit's pieces of a token request: the request as OAuth writes it, an endpoint key checked as
/// one, and an expiry counted on both clocks.
@Suite("A token request, its endpoint key and its expiry", .hangLimit)
struct TokenRequestTests {
    @Test func aTokenRequestIsAFormPostWhoseValuesArePercentEncodedInTheirOrder() throws {
        let url = try #require(URL(string: "https://auth.example.com/token"))
        let request = OutgoingRequest.tokenRequest(to: url, form: ["grant_type": "client_credentials", "client_id": "a b&c=d+é/~._-"])
        #expect(request.method == "POST" && request.url == url)
        #expect(request.body.map { String(decoding: $0, as: UTF8.self) } == "grant_type=client_credentials&client_id=a%20b%26c%3Dd%2B%C3%A9%2F~._-")
        #expect(request.value(forHeader: "Content-Type") == "application/x-www-form-urlencoded")
        #expect(request.value(forHeader: "Accept") == "application/json")
    }

    @Test func aTokenRequestCarriesTheHeadersItIsGivenOverItsOwn() throws {
        let url = try #require(URL(string: "https://auth.example.com/token"))
        let request = OutgoingRequest.tokenRequest(to: url, form: ["k": "v"], headers: ["DPoP": "proof", "Accept": "application/jwt"])
        #expect(request.value(forHeader: "DPoP") == "proof")
        #expect(request.value(forHeader: "Accept") == "application/jwt")
    }

    @Test(arguments: ["http://auth.example.com/token", "https://user@auth.example.com/token", "https://auth.example.com/token?x=1",
                      "https://auth.example.com/token#f"])
    func aSecureEndpointKeyRefusesAURLCredentialsCouldLeakFrom(_ text: String) throws {
        let key = ModeSettingKey.secureEndpoint("partnerTokenURL", purpose: "Where partner tokens are fetched")
        let url = try #require(URL(string: text))
        #expect(throws: ConfigurationError.self) { try key.check(.url(url)) }
        do { try key.check(.url(url)) } catch { #expect(error.code == .invalidValue && error.key == "partnerTokenURL") }
    }

    @Test func aSecureEndpointKeyTakesHTTPSAndLoopbackHTTPAndSaysSoInItsMeaning() throws {
        let key = ModeSettingKey.secureEndpoint("partnerTokenURL", purpose: "Where partner tokens are fetched")
        try key.check(.url(try #require(URL(string: "https://auth.example.com/token"))))
        try key.check(.url(try #require(URL(string: "http://127.0.0.1:8080/token"))))
        #expect(key.type == .url && key.isRequired)
        #expect(key.meaning == "Where partner tokens are fetched: `https` (`http` on a loopback host only), no user info, query or fragment.")
    }

    @Test func anExpiryFromALifetimeEndsByTheWallClockOrTheMonotonicClockWhicheverComesFirst() {
        let clock = ManualClock()
        let expiry = TokenExpiry(lifetime: 100, clock: clock)
        #expect(expiry.remaining(on: clock) == 100)
        clock.advance(by: 60)
        #expect(!expiry.isStale(on: clock, leeway: 30))
        // A wall clock set back does not extend it: the monotonic clock still counts.
        clock.setWallClock(to: clock.now().addingTimeInterval(-3_600))
        #expect(expiry.remaining(on: clock) == 40)
        #expect(expiry.isStale(on: clock, leeway: 41))
        // A wall clock that moved on while the monotonic one stood still (a device asleep) ends it too.
        clock.setWallClock(to: clock.now().addingTimeInterval(3_600 + 50))
        #expect(expiry.remaining(on: clock) == -10)
        #expect(expiry.isStale(on: clock, leeway: 0))
    }

    @Test func aLifetimeThatIsNotANumberExpiresAsItArrivesNeverFreshForever() {
        let clock = ManualClock()
        #expect(TokenExpiry(lifetime: .nan, clock: clock).remaining(on: clock) == 0)
        #expect(TokenExpiry(lifetime: -.nan, clock: clock).isStale(on: clock, leeway: 1))
        let arrived = TokenExpiry(lifetime: .nan, clock: clock)
        clock.advance(by: 0.001)
        #expect(arrived.isStale(on: clock, leeway: 0))
        #expect(TokenExpiry(lifetime: -5, clock: clock).isStale(on: clock, leeway: 0))
        // A lifetime no clock reaches is taken as given: no trap, never stale by time.
        #expect(!TokenExpiry(lifetime: .infinity, clock: clock).isStale(on: clock, leeway: 86_400))
    }
}
