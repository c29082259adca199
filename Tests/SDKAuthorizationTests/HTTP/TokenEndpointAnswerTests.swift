import Foundation
import SDKAuthorization
import SDKAuthorizationModeKit
import Testing
import TestSupport

/// A token endpoint's answer is read in order (size, status, JSON, token type, token, lifetime), and
/// no refusal repeats a token or carries an answer that may hold one.
@Suite("A token endpoint's answer, read and refused", .hangLimit)
struct TokenEndpointAnswerTests {
    let token = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ1c2VyLTEifQ.c2lnbmF0dXJl"

    func answer(_ body: String, status: Int = 200) -> ServerResponse {
        ServerResponse(statusCode: status, body: Data(body.utf8))
    }

    @Test func aGoodAnswerGivesTheTokenAndItsLifetime() throws {
        let read = try TokenEndpointAnswer(answer(#"{"access_token":"\#(token)","token_type":"DPoP","expires_in":600}"#),
                                           from: "the token endpoint", tokenType: "dpop")
        #expect(read.token == token)
        #expect(read.lifetime == 600)
    }

    @Test func itsDescriptionAndMirrorShowTheLifetimeNeverTheToken() throws {
        let read = try TokenEndpointAnswer(answer(#"{"access_token":"\#(token)","expires_in":600}"#), from: "the token endpoint")
        var dumped = ""
        dump(read, to: &dumped)
        for text in [read.description, String(reflecting: read), dumped] {
            #expect(!text.contains(token))
            #expect(!text.contains("c2lnbmF0dXJl"))
        }
        #expect(read.description.contains("600"))
    }

    @Test func anAnswerLargerThanTheLimitIsRefusedUnparsed() {
        let body = #"{"access_token":"\#(token)","expires_in":600,"pad":"\#(String(repeating: "x", count: 200))"}"#
        #expect {
            try TokenEndpointAnswer(answer(body), from: "the platform", limits: .init(maximumSize: 100))
        } throws: { error in
            let refusal = error as? TokenEndpointAnswer.Refusal
            return refusal?.reason == "the platform's answer is larger than 100 bytes (\(body.utf8.count)); it is not read" && refusal?.response == nil
        }
    }

    @Test func aRefusalNamesTheServersErrorCodeEscapedAndKeepsItsAnswer() {
        let refused = answer(#"{"error":"invalid_grant\u0000\u202e"}"#, status: 400)
        #expect {
            try TokenEndpointAnswer(refused, from: "the token endpoint")
        } throws: { error in
            let refusal = error as? TokenEndpointAnswer.Refusal
            return refusal?.reason.hasPrefix("the token endpoint refused the token request with HTTP 400 ('invalid_grant") == true
                && refusal?.reason.contains("\u{202e}") == false && refusal?.response == refused
        }
        #expect(TokenEndpointAnswer.errorCode(in: answer(#"{"error":"use_dpop_nonce"}"#, status: 400)) == "use_dpop_nonce")
        #expect(TokenEndpointAnswer.errorCode(in: answer(#"{"error":"x","pad":"\#(String(repeating: "y", count: 5_000))"}"#, status: 400)) == nil)
    }

    @Test(arguments: [
        ("is not a JSON object", #"["\#(String(repeating: "t", count: 8))"]"#),
        ("is not a JSON object", String(repeating: "[", count: 100)),
        ("has no token_type DPoP", #"{"access_token":"token-bearer","token_type":"Bearer","expires_in":600}"#),
        ("has no token_type DPoP", #"{"access_token":"token-untyped","expires_in":600}"#),
        ("access_token is missing", #"{"token_type":"DPoP","expires_in":600}"#),
        ("or not a b64token", #"{"access_token":"token with space","token_type":"DPoP","expires_in":600}"#),
        ("or not a b64token", #"{"access_token":"tok\r\nX-Injected: 1","token_type":"DPoP","expires_in":600}"#),
        ("or not a b64token", #"{"access_token":"","token_type":"DPoP","expires_in":600}"#),
        ("longer than 64 bytes", #"{"access_token":"\#(String(repeating: "a", count: 65))","token_type":"DPoP","expires_in":600}"#),
        ("expires_in is missing or not a number of seconds from 1 to 86400", #"{"access_token":"token-forever","token_type":"DPoP"}"#),
        ("expires_in is missing or not a number of seconds from 1 to 86400", #"{"access_token":"token-zero","token_type":"DPoP","expires_in":0}"#),
        ("expires_in is missing or not a number of seconds from 1 to 86400", #"{"access_token":"token-negative","token_type":"DPoP","expires_in":-5}"#),
        ("expires_in is missing or not a number of seconds from 1 to 86400", #"{"access_token":"token-long","token_type":"DPoP","expires_in":86401}"#),
        ("expires_in is missing or not a number of seconds from 1 to 86400", #"{"access_token":"token-huge","token_type":"DPoP","expires_in":1e300}"#),
        ("expires_in is missing or not a number of seconds from 1 to 86400", #"{"access_token":"token-text","token_type":"DPoP","expires_in":"600"}"#),
    ])
    func anUnusableAnswerIsRefusedWithoutRepeatingItsToken(reason: String, body: String) {
        #expect {
            try TokenEndpointAnswer(answer(body), from: "the token endpoint", tokenType: "DPoP", limits: .init(maximumTokenLength: 64))
        } throws: { error in
            guard let refusal = error as? TokenEndpointAnswer.Refusal else { return false }
            let secrets = ["token-bearer", "token-untyped", "token with space", "X-Injected", "aaaaaaaa", "token-forever", "token-zero",
                           "token-negative", "token-long", "token-huge", "token-text", "tttttttt"]
            return refusal.reason.contains(reason) && refusal.response == nil && !secrets.contains { refusal.reason.contains($0) }
        }
    }
}
