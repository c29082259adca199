import Foundation
import Testing
import TestSupport
@testable import SDKAuthorizationDoctor

@Suite("The doctor's command line", .hangLimit)
struct DoctorArgumentsTests {
    private func parse(_ arguments: String..., input: String? = nil) -> Result<Doctor.Request, Doctor.UsageError> {
        Doctor.parse(arguments, readStandardInput: { input })
    }

    @Test func filesOptionsAndInlineValuesAreRead() throws {
        let request = try parse("--package-directory", "/p", "a.json", "--jwt=t.o.k", "--", "--odd-name.json").get()
        #expect(request == Doctor.Request(packageDirectory: "/p", token: "t.o.k", files: ["a.json", "--odd-name.json"]))
    }

    @Test func linkedProductsAreACommaSeparatedListThatMayBeEmptyAndIsGivenOnce() throws {
        #expect(try parse().get().linkedProducts == nil)
        #expect(try parse("--linked-products", "SDKAuthorizationIDToken, SDKAuthorization").get().linkedProducts == ["SDKAuthorizationIDToken", "SDKAuthorization"])
        #expect(try parse("--linked-products", "").get().linkedProducts == [])
        #expect(try parse("--linked-products=").get().linkedProducts == [])
        #expect(parse("--linked-products", "A", "--linked-products", "B") == .failure(Doctor.UsageError("--linked-products is given twice")))
        #expect(try parse("--target-products", "/p/a=b/Sources/App=A,B", "--target-products", "Other=").get().targetProducts
                == ["/p/a=b/Sources/App": ["A", "B"], "Other": []])
        #expect(parse("--target-products", "NoList") == .failure(Doctor.UsageError("--target-products needs DIR=LIST")))
    }

    @Test func jwtDashReadsTheTokenFromStandardInput() throws {
        #expect(try parse("--jwt", "-", input: "a.b.c\n").get().token == "a.b.c\n")
    }

    @Test(arguments: [
        (["--jwt"], "--jwt needs a value"),
        (["--package-directory"], "--package-directory needs a value"),
        (["--jwt", "a", "--jwt", "b"], "--jwt is given twice"),
        (["--jwt", "-"], "--jwt - read no token from standard input"),
        (["--verbose"], "unknown option '--verbose'"),
    ])
    func aBadCommandLineIsAUsageErrorWithStatus64(arguments: [String], message: String) {
        #expect(Doctor.parse(arguments, readStandardInput: { nil }) == .failure(Doctor.UsageError(message)))
        let report = Doctor.run(arguments, now: Date(timeIntervalSince1970: 0), currentDirectory: URL(fileURLWithPath: "/"))
        #expect(report.exitStatus == 64)
        #expect(report.findings.first == Finding(.error, message))
    }

    @Test func anUnknownOptionIsCutSoAPastedTokenIsNotRepeated() {
        let pasted = "--" + String(repeating: "s", count: 100)
        let report = Doctor.run([pasted], now: Date(timeIntervalSince1970: 0), currentDirectory: URL(fileURLWithPath: "/"))
        #expect(!report.findings.description.contains(String(repeating: "s", count: 30)))
    }

    @Test func helpPrintsUsageAndSucceeds() {
        let report = Doctor.run(["--help"], now: Date(timeIntervalSince1970: 0), currentDirectory: URL(fileURLWithPath: "/"))
        #expect(report.exitStatus == 0)
        #expect(report.findings == [Finding(.note, Doctor.usage)])
    }

    @Test func aFindingReadsLikeACompilerDiagnostic() {
        #expect(Finding(.error, file: "a.json", key: "providerName", "Boom").description == "a.json: error: Boom (key 'providerName')")
        #expect(Finding(.warning, "JWT has no exp").description == "warning: JWT has no exp")
        #expect(Finding(.note, file: "a.json", "ok: fine").description == "a.json: ok: fine")
        #expect(Finding(.note, "JWT header:").description == "JWT header:")
    }
}
