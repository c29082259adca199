import Foundation
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationModeKit

@Suite("JWT claims reader", .hangLimit)
struct JWTClaimsTests {
    @Test func registeredAndCustomClaimsAreRead() throws {
        let token = makeJWT(["sub": "user-1", "exp": 1_900_000_000, "iat": 1_800_000_000, "iss": "api-key", "aud": "braze", "ticketmasterID": "tm-9", "vip": true])
        let claims = try JWTClaims(decoding: token)
        #expect(claims.subject == "user-1")
        #expect(claims.expiresAt == Date(timeIntervalSince1970: 1_900_000_000))
        #expect(claims.issuedAt == Date(timeIntervalSince1970: 1_800_000_000))
        #expect(claims.issuer == "api-key")
        #expect(claims.audience == ["braze"])
        #expect(claims[claim: "ticketmasterID"] == .string("tm-9"))
        #expect(claims[claim: "vip"] == .bool(true))
        #expect(claims.header["alg"] == .string("RS256"))
    }

    @Test func aDigitStringDateIsReadOnlyForTheClaimsNamedAndOnlyWhenItIsAllDigits() throws {
        let token = makeJWT(["iat": "1700000000", "exp": 1_900_000_000])
        #expect(throws: JWTDecodingError.self, "the public reader keeps NumericDate strict") { try JWTClaims(decoding: token) }
        let claims = try JWTClaims(decoding: token, digitStringDates: ["iat"])
        #expect(claims.issuedAt == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(throws: JWTDecodingError.self) { try JWTClaims(decoding: makeJWT(["exp": "1900000000"]), digitStringDates: ["iat"]) }
        #expect(JWTClaims.wholeSeconds("0") == 0)
        #expect(JWTClaims.wholeSeconds("999999999999") == 999_999_999_999)
        for bad in ["", "1234567890123", "-1", "+1", " 1", "1 ", "1.5", "1e9", "0x10", "\u{0661}", "1\u{0}"] {
            #expect(JWTClaims.wholeSeconds(bad) == nil, "\(bad.debugDescription)")
        }
    }

    @Test func audienceArrayAndMissingClaimsAreRead() throws {
        let claims = try JWTClaims(decoding: makeJWT(["aud": ["a", "b"]]))
        #expect(claims.audience == ["a", "b"])
        #expect(claims.expiresAt == nil)
        #expect(claims.subject == nil)
        #expect(!claims.expires(within: 60, of: Date()))
    }

    @Test func expiryWithinLeewayIsDetected() throws {
        let now = Date(timeIntervalSince1970: 1_000)
        #expect(try JWTClaims(decoding: makeJWT(["exp": 1_059])).expires(within: 60, of: now))
        #expect(!(try JWTClaims(decoding: makeJWT(["exp": 1_060])).expires(within: 60, of: now)))
    }

    @Test func paddedAndUnpaddedBase64URLDecode() throws {
        // Payload lengths that need 0, 1 and 2 padding characters.
        for sub in ["a", "ab", "abc", "abcd"] {
            #expect(try JWTClaims(decoding: makeJWT(["sub": sub])).subject == sub)
        }
    }

    @Test(arguments: ["", "abc", "a.b", "a.b.c.d", "..", "a..b.c"])
    func wrongSegmentCountIsATypedError(token: String) {
        do {
            _ = try JWTClaims(decoding: token)
            if token.split(separator: ".", omittingEmptySubsequences: false).count == 3 { return }
            Issue.record("accepted \(token)")
        } catch {
            switch error.code {
            case .wrongSegmentCount, .invalidBase64: break
            default: Issue.record("\(error)")
            }
        }
    }

    @Test func badBase64IsATypedError() {
        #expect(throws: JWTDecodingError.invalidBase64(segment: "header")) { try JWTClaims(decoding: "!!!.e30.sig") }
        #expect(throws: JWTDecodingError.invalidBase64(segment: "payload")) { try JWTClaims(decoding: "e30.a*b.sig") }
        #expect(throws: JWTDecodingError.invalidBase64(segment: "payload")) { try JWTClaims(decoding: "e30.e30=.sig") }
        #expect(throws: JWTDecodingError.invalidBase64(segment: "payload")) { try JWTClaims(decoding: "e30.a.sig") }
    }

    @Test func nonJSONIsATypedError() {
        let text = base64URL(Data("not json".utf8))
        let array = base64URL(Data("[1,2]".utf8))
        #expect(throws: JWTDecodingError.notJSON(segment: "payload")) { try JWTClaims(decoding: "e30.\(text).sig") }
        #expect(throws: JWTDecodingError.notJSON(segment: "header")) { try JWTClaims(decoding: "\(array).e30.sig") }
    }

    @Test func expGivenAsAStringIsATypedError() {
        #expect(throws: JWTDecodingError.invalidClaim(name: "exp", expected: "a number of seconds since 1970")) {
            try JWTClaims(decoding: makeJWT(["exp": "1900000000"]))
        }
        #expect(throws: JWTDecodingError.invalidClaim(name: "sub", expected: "a string")) {
            try JWTClaims(decoding: makeJWT(["sub": 7]))
        }
        #expect(throws: JWTDecodingError.invalidClaim(name: "aud", expected: "a string or an array of strings")) {
            try JWTClaims(decoding: makeJWT(["aud": [1]]))
        }
    }

    @Test func redactionShowsAShortPrefixAndTheLength() {
        let token = makeJWT(["sub": "user-1"])
        let redacted = Redaction.redact(token)
        #expect(redacted == "\(token.prefix(6))…(\(token.count) chars)")
        #expect(Redaction.redact("short-key") == "(redacted, 9 chars)")
    }

    @Test func aClaimPayloadEncodesAsTheJSONAServerExpectsAndDecodesBack() throws {
        // The CCAI signing callback hands the payload to the app's server: it must go as JSON values,
        // not as Swift's description of the enum (`string("auth_token")`).
        let payload: [String: JWTClaimValue] = [
            "payload_type": .string("auth_token"),
            "iat": .number(1_700_000_000),
            "verified": .bool(true),
            "phone": .null,
            "scopes": .array([.string("read"), .number(1.5)]),
            "custom": .object(["tier": .string("gold")]),
        ]
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = String(decoding: try encoder.encode(payload), as: UTF8.self)
        #expect(json == #"{"custom":{"tier":"gold"},"iat":1700000000,"payload_type":"auth_token","phone":null,"scopes":["read",1.5],"verified":true}"#)
        #expect(try JSONDecoder().decode([String: JWTClaimValue].self, from: Data(json.utf8)) == payload)
    }
}
