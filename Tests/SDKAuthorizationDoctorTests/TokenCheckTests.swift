import Foundation
import Testing
import TestSupport
import SDKAuthorization
import SDKAuthorizationModeKit
@testable import SDKAuthorizationDoctor

@Suite("The doctor decodes JWTs", .hangLimit)
struct TokenCheckTests {
    private let now = Date(timeIntervalSince1970: 1_800_000_000)
    /// base64url of "a-signature-that-must-never-be-printed".
    private let signature = Data("a-signature-that-must-never-be-printed".utf8).base64EncodedString()
        .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")

    private func segment(_ json: String) -> String {
        Data(json.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    private func token(header: String = #"{"alg":"HS256","typ":"JWT"}"#, payload: String) -> String {
        "\(segment(header)).\(segment(payload)).\(signature)"
    }

    private func run(_ token: String) -> DoctorReport {
        Doctor.run(["--jwt", token], now: now, currentDirectory: URL(fileURLWithPath: "/"))
    }

    @Test func aGoodTokenShowsHeaderClaimsAndTimeToExpiryButNeitherSignatureNorToken() {
        let jwt = token(payload: #"{"sub":"user-1","exp":1800003723,"iat":1799999000,"aud":["a","b"]}"#)
        let report = run(jwt)
        let text = report.findings.map(\.description).joined(separator: "\n")
        #expect(report.exitStatus == 0)
        #expect(report.findings.allSatisfy { $0.severity == .note })
        #expect(text.contains(#"  alg: "HS256""#))
        #expect(text.contains(#"  sub: "user-1""#))
        #expect(text.contains(#"  aud: ["a", "b"]"#))
        #expect(text.contains("  exp: 1800003723 (2027-01-15T09:02:03Z, in 1 h 2 min)"))
        #expect(text.contains("  iat: 1799999000 (2027-01-15T07:43:20Z, 16 min 40 s ago)"))
        #expect(text.contains("JWT expires in 1 h 2 min (exp 2027-01-15T09:02:03Z)"))
        #expect(text.contains("JWT signature: not shown, not verified"))
        #expect(!text.contains(signature))
        #expect(!text.contains(jwt))
    }

    @Test func anExpiredUnsignedTokenFailsAndSaysBoth() {
        let report = run(token(header: #"{"alg":"none"}"#, payload: #"{"exp":1799996400}"#))
        #expect(report.exitStatus == 1)
        #expect(report.findings.filter { $0.severity == .error }.map(\.message) == [
            "JWT alg is 'none': the token is unsigned, and a server must refuse it",
            "JWT expired 1 h 0 min ago (exp 2027-01-15T07:00:00Z)",
        ])
    }

    @Test func algNoneIsAnErrorInAnyCase() {
        let report = run(token(header: #"{"alg":"NONE"}"#, payload: #"{"exp":1800003600}"#))
        #expect(report.exitStatus == 1)
    }

    @Test func aTokenExpiringExactlyNowIsNotYetExpiredAsTheFrameworkCountsIt() {
        let report = run(token(payload: #"{"exp":1800000000}"#))
        #expect(report.exitStatus == 0)
        #expect(report.findings.contains { $0.message == "JWT expires in 0 s (exp 2027-01-15T08:00:00Z)" })
    }

    @Test func aTokenWithoutExpOrAlgWarnsButPasses() {
        let report = run(token(header: #"{"typ":"JWT"}"#, payload: #"{"sub":"u"}"#))
        #expect(report.exitStatus == 0)
        #expect(report.findings.filter { $0.severity == .warning }.map(\.message) == [
            "JWT header names no alg",
            "JWT has no exp claim: it never expires by its own account, and the framework's token cache never keeps it",
        ])
    }

    @Test func aTokenNotValidYetWarns() {
        let report = run(token(payload: #"{"exp":1800007200,"nbf":1800000090}"#))
        #expect(report.findings.contains(Finding(.warning, "JWT is not valid for another 1 min 30 s (nbf 2027-01-15T08:01:30Z)")))
    }

    @Test(arguments: [
        ("a.b", JWTDecodingError.wrongSegmentCount(2)),
        ("!!!.e30.sig", JWTDecodingError.invalidBase64(segment: "header")),
        ("e30.WzFd.sig", JWTDecodingError.notJSON(segment: "payload")),
        ("e30.eyJleHAiOiJzb29uIn0.sig", JWTDecodingError.invalidClaim(name: "exp", expected: "a number of seconds since 1970")),
        ("e30.eyJhIjoxLCJhIjoyfQ.sig", JWTDecodingError.duplicateClaim(name: "a")),
        (String(repeating: "a", count: JWTClaims.maximumTokenLength + 1), JWTDecodingError.tooLarge(limit: JWTClaims.maximumTokenLength)),
    ])
    func aMalformedTokenFailsWithTheParsersMessageAndIsNotRepeated(jwt: String, expected: JWTDecodingError) {
        let report = run(jwt)
        #expect(report.exitStatus == 1)
        #expect(report.findings == [Finding(.error, "JWT: \(expected.message)")])
    }

    @Test func claimsThatCouldForgeALineAreEscaped() {
        let report = run(token(payload: #"{"exp":1800003600,"name":"a\nerror: forged"}"#))
        #expect(report.findings.contains(Finding(.note, #"  name: "a\u{a}error: forged""#)))
        #expect(!report.findings.contains { $0.message.contains("\n") })
    }

    @Test func aTokenPastedWithItsBearerSchemeIsRead() {
        let report = run("Bearer  " + token(payload: #"{"exp":1800003600}"#) + "\n")
        #expect(report.exitStatus == 0)
        #expect(report.findings.contains(Finding(.note, "JWT expires in 1 h 0 min (exp 2027-01-15T09:00:00Z)")))
    }

    @Test func aTokenAndFilesAreCheckedInOneRun() throws {
        let package = try ScratchPackage()
        try package.write("authorization.json", Files.good)
        let report = Doctor.run(["--package-directory", package.url.path, "--jwt", token(payload: #"{"exp":1}"#), "authorization.json"],
                                now: now, currentDirectory: package.url)
        #expect(report.exitStatus == 1)
        #expect(report.findings.last?.file == "authorization.json")
    }

    @Test(arguments: [(59.9, "59 s"), (61, "1 min 1 s"), (3_600, "1 h 0 min"), (90_061, "1 d 1 h"), (-5, "0 s")])
    func durationsShowTwoUnitsAtMost(seconds: Double, text: String) {
        #expect(TokenCheck.duration(seconds) == text)
    }
}
