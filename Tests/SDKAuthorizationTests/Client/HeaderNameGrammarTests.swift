import Foundation
import SDKAuthorizationTesting
import Testing
import TestSupport
@testable import SDKAuthorization
import SDKAuthorizationModeKit

/// RFC 9110 section 5.6.2: `token = 1*tchar`, written out here independently of the code under test.
let rfc9110TokenCharacters = Set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".unicodeScalars)

/// The delimiters RFC 9110 section 5.6.2 names, which `tchar` leaves out.
let rfc9110Delimiters = Array("\"(),/:;<=>?@[\\]{}".unicodeScalars)

@Suite("Header names are RFC 9110 tokens", .hangLimit)
struct HeaderNameGrammarTests {
    /// Every ASCII character: controls (0x00-0x1F), space, the visible ones and DEL.
    static let everyASCIIScalar = (0...0x7F).map { Unicode.Scalar(UInt8($0)) }

    @Test(arguments: everyASCIIScalar)
    func anASCIICharacterIsAcceptedInANameExactlyWhenItIsATokenCharacter(scalar: Unicode.Scalar) {
        let character = String(Character(scalar))
        let isTokenCharacter = rfc9110TokenCharacters.contains(scalar)
        for name in [character, "X-\(character)", "\(character)-Name", "X-\(character)-Name"] {
            #expect(HeaderFieldRules.isValidName(name) == isTokenCharacter, "\(name.debugDescription)")
        }
    }

    @Test func theDelimitersSpaceControlsAndDELAreRefused() {
        var refused = rfc9110Delimiters
        refused += [" ", "\t", "\r", "\n", "\u{0}", "\u{1F}", "\u{7F}"]
        #expect(refused.count == 24)
        for scalar in refused {
            #expect(!HeaderFieldRules.isValidName("X\(Character(scalar))Y"), "\(scalar.escaped(asASCII: true))")
        }
    }

    @Test(arguments: ["X-Caf\u{E9}", "\u{80}", "X-\u{FF}", "X-\u{2028}", "X-\u{202E}", "\u{212A}ey", "X\u{FF1A}Y", "X-\u{1F511}", "X-\u{85}"])
    func aNameWithANonASCIICharacterIsRefused(name: String) {
        #expect(!HeaderFieldRules.isValidName(name))
    }

    @Test func everyTokenCharacterIsAcceptedAndAnEmptyNameIsNot() {
        #expect(HeaderFieldRules.isValidName(String(String.UnicodeScalarView(rfc9110TokenCharacters.sorted()))))
        #expect(HeaderFieldRules.isValidName("X-Braze-Auth-Signature"))
        #expect(!HeaderFieldRules.isValidName(""))
    }

    @Test(arguments: rfc9110Delimiters)
    func aCallerHeaderNamedWithADelimiterFailsTheRequestLocally(delimiter: Unicode.Scalar) async throws {
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(host: "api.example.com", scheme: .bearer))
        let provider = ScriptedProvider(.token("tok"))
        let authorizer = try RequestAuthorizer(policy: policy, providers: [.bearer: provider], diagnostics: RecordingDiagnosticsSink())
        let name = "X\(Character(delimiter))Y"
        let request = OutgoingRequest(method: "GET", url: try #require(URL(string: "https://api.example.com/x")), headers: [name: "v"])
        await #expect(throws: RequestError.invalidHeader(name: name)) {
            try await authorizer.authorize(request)
        }
        #expect(provider.requestedContexts.isEmpty)
    }

    @Test(arguments: rfc9110Delimiters)
    func aCredentialHeaderNamedWithADelimiterIsNeverSent(delimiter: Unicode.Scalar) async throws {
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(host: "api.example.com", scheme: "custom"))
        let authorizer = try RequestAuthorizer(policy: policy, providers: ["custom": ScriptedProvider(.credential(.header("X\(Character(delimiter))Key", value: "secret")))],
                                               diagnostics: RecordingDiagnosticsSink())
        await #expect(throws: RequestError.invalidCredential(endpoint: nil)) {
            try await authorizer.authorize(OutgoingRequest(method: "GET", url: try #require(URL(string: "https://api.example.com/x"))))
        }
    }
}
