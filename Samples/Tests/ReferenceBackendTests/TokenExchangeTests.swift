import Crypto
import Foundation
import ReferenceBackend
import Testing

/// Signs claims as the host app's server would: HS256/HS384 with the shared secret, or unsigned.
func signedPayload(_ claims: [String: Any], algorithm: String = "HS256", secret: String = "sample-exchange-secret") -> String {
    func segment(_ object: [String: Any]) -> String {
        base64URL((try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data())
    }
    let input = segment(["alg": algorithm, "typ": "JWT"]) + "." + segment(claims)
    let key = SymmetricKey(data: Data(secret.utf8))
    switch algorithm {
    case "HS256": return input + "." + base64URL(Data(HMAC<SHA256>.authenticationCode(for: Data(input.utf8), using: key)))
    case "HS384", "HS512": return input + "." + base64URL(Data(HMAC<SHA384>.authenticationCode(for: Data(input.utf8), using: key)))
    default: return input + "."
    }
}

func base64URL(_ data: Data) -> String {
    data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
}

/// Claims valid now: issued now, expiring in five minutes, for `user-7`.
func validClaims(_ extra: [String: Any] = [:]) -> [String: Any] {
    let now = Int(Date().timeIntervalSince1970)
    return ["iat": now, "exp": now + 300, "identifier": "user-7"].merging(extra) { _, new in new }
}

struct ExchangeReply: Decodable {
    var auth_token: String?
    var token_type: String?
    var expires_in: Int?
    var error: String?
}

@Suite("Reference backend token exchange", .timeLimit(.minutes(3)))
struct TokenExchangeTests {
    func exchange(_ backend: ReferenceBackend, _ token: String) async throws -> (HTTPAnswer, ExchangeReply) {
        let answer = try await send(backend, "/ccai/exchange", body: #"{"token":"\#(token)"}"#)
        return (answer, (try? JSONDecoder().decode(ExchangeReply.self, from: Data(answer.raw.utf8))) ?? ExchangeReply())
    }

    @Test func theVendorSamplesEmptyPhoneIsExchangedAsNoPhone() async throws {
        try await withBackend { backend in
            let claims = validClaims(["phone": ""])
            let (answer, reply) = try await exchange(backend, signedPayload(claims))
            #expect(answer.status == 200, "\(answer.raw)")
            #expect(reply.token_type == "Bearer")
        }
    }

    @Test func theRubySamplesDigitStringIatIsExchangedAsTheNumberItSpells() async throws {
        try await withBackend { backend in
            let (answer, reply) = try await exchange(backend, signedPayload(validClaims(["iat": String(Int(Date().timeIntervalSince1970))])))
            #expect(answer.status == 200, "\(answer.raw)")
            #expect(reply.token_type == "Bearer")
            // The number it spells is checked like a number: a digit-string iat in the future is refused.
            let future = String(Int(Date().timeIntervalSince1970) + 600)
            expectFailure(try await exchange(backend, signedPayload(validClaims(["iat": future, "exp": Int(Date().timeIntervalSince1970) + 900]))).0,
                          status: 401, code: .invalidClaims)
        }
    }

    @Test(arguments: ["", " 1700000000", "1700000000 ", "+1700000000", "-1700000000", "1700000000.5", "1.7e9", "0x6553F100",
                      "1234567890123", "\u{FF11}\u{FF17}\u{FF10}\u{FF10}", "yesterday"])
    func anIatStringThatIsNotOnlyDigitsIsRefusedWithAMessageNamingTheClaim(iat: String) async throws {
        try await withBackend { backend in
            let answer = try await exchange(backend, signedPayload(validClaims(["iat": iat]))).0
            expectFailure(answer, status: 401, code: .invalidClaims)
            #expect(answer.raw.contains("'iat' must be a number of seconds since 1970, or a string of 1 to 12 digits"), "\(answer.raw)")
        }
    }

    @Test(arguments: ["HS256", "HS384"])
    func aSignedPayloadIsExchangedAndItsAuthTokenOpensTheChats(algorithm: String) async throws {
        try await withBackend { backend in
            let (answer, reply) = try await exchange(backend, signedPayload(validClaims(["phone": "+14155550100"]), algorithm: algorithm))
            #expect(answer.status == 200, "\(answer.raw)")
            #expect(reply.token_type == "Bearer")
            #expect(reply.expires_in == 600)
            let token = try #require(reply.auth_token)
            let chats = try await send(backend, "/ccai/chats", method: "GET", authorization: "Bearer \(token)", body: nil)
            #expect(chats.status == 200)
            #expect(chats.reply.subject == "user-7")
        }
    }

    @Test(arguments: ["alg none", "HS512", "wrong secret", "expired", "iat in the future", "lifetime over an hour", "no iat", "phone not E.164"])
    func eachBadPayloadIsRefusedWithItsOwnCode(kind: String) async throws {
        let now = Int(Date().timeIntervalSince1970)
        let (token, status, code): (String, Int, ReferenceBackend.ErrorCode) = switch kind {
        case "alg none": (signedPayload(validClaims(), algorithm: "none"), 401, .unsignedPayload)
        case "HS512": (signedPayload(validClaims(), algorithm: "HS512"), 401, .unsupportedAlgorithm)
        case "wrong secret": (signedPayload(validClaims(), secret: "the-wrong-secret"), 401, .invalidSignature)
        case "expired": (signedPayload(validClaims(["iat": now - 100, "exp": now - 10])), 401, .tokenExpired)
        case "iat in the future": (signedPayload(validClaims(["iat": now + 600, "exp": now + 900])), 401, .invalidClaims)
        case "lifetime over an hour": (signedPayload(validClaims(["exp": now + 7_200])), 401, .invalidClaims)
        case "no iat": (signedPayload(["identifier": "u", "exp": now + 60]), 401, .missingClaim)
        default: (signedPayload(validClaims(["phone": "415-555-0100"])), 400, .invalidPhone)
        }
        try await withBackend { backend in
            expectFailure(try await exchange(backend, token).0, status: status, code: code)
        }
    }

    @Test func malformedExchangeRequestsAreRefused() async throws {
        try await withBackend { backend in
            expectFailure(try await send(backend, "/ccai/exchange", body: #"{"jwt":"x"}"#), status: 400, code: .invalidRequest)
            expectFailure(try await send(backend, "/ccai/exchange", body: "not json"), status: 400, code: .invalidRequest)
            expectFailure(try await exchange(backend, "a.b").0, status: 401, code: .malformedToken)
            let oversized = signedPayload(validClaims(["pad": String(repeating: "x", count: 9_000)]))
            expectFailure(try await exchange(backend, oversized).0, status: 401, code: .tokenTooLarge)
            let nested = base64URL(Data(#"{"alg":"HS256"}"#.utf8)) + "." + base64URL(Data(("{\"a\":" + String(repeating: "[", count: 2_000) + String(repeating: "]", count: 2_000) + "}").utf8)) + ".c2ln"
            expectFailure(try await exchange(backend, nested).0, status: 401, code: .malformedToken)
        }
    }

    @Test func chatsRefuseMissingUnknownAndExpiredAuthTokens() async throws {
        try await withBackend { backend in
            expectFailure(try await send(backend, "/ccai/chats", method: "GET", body: nil), status: 401, code: .missingAuthorization)
            expectFailure(try await send(backend, "/ccai/chats", method: "GET", authorization: "Bearer never-issued", body: nil), status: 401, code: .invalidAuthToken)
            let token = try #require(try await exchange(backend, signedPayload(validClaims())).1.auth_token)
            backend.expireExchangedTokens()
            expectFailure(try await send(backend, "/ccai/chats", method: "GET", authorization: "Bearer \(token)", body: nil), status: 401, code: .tokenExpired)
        }
    }

    @Test func e164IsCheckedExactly() {
        for valid in ["+14155550100", "+44", "+123456789012345"] { #expect(ReferenceBackend.isE164(valid), "\(valid)") }
        for invalid in ["14155550100", "+0123", "+1", "+1234567890123456", "+1 415", "+1-415", "", "+"] { #expect(!ReferenceBackend.isE164(invalid), "\(invalid)") }
    }
}
