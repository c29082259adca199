import Foundation
import SDKAuthorization
import SDKAuthorizationModeKit
import Testing
import TestSupport

/// The kit's `WWW-Authenticate` reader, through its public API: what a mode reads a rejection with.
@Suite("WWW-Authenticate challenges are read boundedly and never trap", .hangLimit)
struct AuthenticationChallengeTests {
    @Test func severalChallengesWithTokenAndQuotedParametersAreReadInOrder() {
        let challenges = AuthenticationChallenge.parse(#"Bearer realm="api", error="invalid_token", DPoP algs="ES256 PS256", error=use_dpop_nonce"#)
        #expect(challenges.map(\.scheme) == ["Bearer", "DPoP"])
        #expect(challenges[0].parameter("realm") == "api")
        #expect(challenges[0].parameter("ERROR") == "invalid_token", "names are compared case-insensitively")
        #expect(challenges[1].parameter("algs") == "ES256 PS256")
        #expect(challenges[1].parameter("error") == "use_dpop_nonce")
        #expect(challenges[1].isScheme("dpop"))
    }

    @Test func aQuotedStringsEscapesAreResolvedAndItsCommasKeptInside() {
        let challenges = AuthenticationChallenge.parse(#"Bearer error_description="a \"quoted\", with a comma\\", Basic"#)
        #expect(challenges.map(\.scheme) == ["Bearer", "Basic"])
        #expect(challenges[0].parameter("error_description") == #"a "quoted", with a comma\"#)
    }

    @Test func theFirstOfARepeatedParameterWinsAndAParameterBeforeAnySchemeIsDropped() {
        let challenges = AuthenticationChallenge.parse(#"error="orphan", Bearer error=first, error=second"#)
        #expect(challenges.count == 1)
        #expect(challenges[0].parameters == ["error": "first"])
    }

    @Test func aToken68AndJunkAreSkippedToTheNextComma() {
        let challenges = AuthenticationChallenge.parse(#"Negotiate abc123==, =junk, Bearer error="x" trailing junk, DPoP"#)
        #expect(challenges.map(\.scheme) == ["Negotiate", "Bearer", "DPoP"])
        #expect(challenges[1].parameter("error") == "x")
    }

    @Test func aFieldOneByteOverTheLimitGivesNoChallengeAndOneAtTheLimitIsRead() {
        let prefix = "Bearer error=x, "
        let atLimit = prefix + String(repeating: "a", count: AuthenticationChallenge.maximumFieldLength - prefix.utf8.count)
        #expect(AuthenticationChallenge.parse(atLimit).first?.parameter("error") == "x")
        #expect(AuthenticationChallenge.parse(atLimit + "a").isEmpty)
    }

    @Test func challengesAndParametersPastTheirLimitsAreIgnored() {
        let schemes = (0..<(AuthenticationChallenge.maximumChallenges + 1)).map { "S\($0)" }.joined(separator: ", ")
        #expect(AuthenticationChallenge.parse(schemes).count == AuthenticationChallenge.maximumChallenges)
        let parameters = (0..<(AuthenticationChallenge.maximumParameters + 1)).map { "p\($0)=v" }.joined(separator: ", ")
        let read = AuthenticationChallenge.parse("Bearer " + parameters)
        #expect(read.first?.parameters.count == AuthenticationChallenge.maximumParameters)
        #expect(read.first?.parameter("p\(AuthenticationChallenge.maximumParameters)") == nil)
    }

    @Test func aResponseGivesTheChallengesOfItsField() {
        let response = ServerResponse(statusCode: 401, headers: ["www-authenticate": #"DPoP error="invalid_token""#])
        #expect(response.authenticationChallenges.first?.parameter("error") == "invalid_token")
        #expect(ServerResponse(statusCode: 401).authenticationChallenges.isEmpty)
    }

    @Test func theDescriptionNamesTheSchemeAndParametersButNoValue() {
        let challenge = AuthenticationChallenge.parse(#"Bearer realm="secret-realm", error="invalid_token""#)[0]
        #expect(challenge.description == "Bearer(error, realm)")
        #expect(!"\(challenge)".contains("secret-realm"))
    }

    @Test func randomBytesNeverTrapAndStayWithinTheLimits() {
        var generator = SeededGenerator(seed: 0x5EED)
        let alphabet = Array("Bearer DPoP error=\"\\,= \tabc".utf8) + [0x00, 0xFF, 0xC3, 0xA9]
        for _ in 0..<3_000 {
            let length = Int.random(in: 0...200, using: &generator)
            let bytes = (0..<length).map { _ in alphabet.randomElement(using: &generator)! }
            let challenges = AuthenticationChallenge.parse(String(decoding: bytes, as: UTF8.self))
            #expect(challenges.count <= AuthenticationChallenge.maximumChallenges)
            #expect(challenges.allSatisfy { !$0.scheme.isEmpty && $0.parameters.count <= AuthenticationChallenge.maximumParameters })
        }
    }
}

/// SplitMix64: the same sequence on every run.
private struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
