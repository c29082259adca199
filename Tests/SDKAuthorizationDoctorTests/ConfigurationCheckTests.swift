import Foundation
import Testing
import TestSupport
import SDKAuthorization
import SDKAuthorizationEngagement
@testable import SDKAuthorizationDoctor

@Suite("The doctor checks configuration files as a client starts from them", .hangLimit)
struct ConfigurationCheckTests {
    private let now = Date(timeIntervalSince1970: 1_800_000_000)

    private func run(_ package: ScratchPackage, _ arguments: String...) -> DoctorReport {
        Doctor.run(["--package-directory", package.url.path] + arguments, now: now, currentDirectory: package.url)
    }

    private func errors(_ report: DoctorReport) -> [Finding] { report.findings.filter { $0.severity == .error } }

    @Test func aGoodFileIsOkAndShowsNoCredential() throws {
        let package = try ScratchPackage()
        try package.write("authorization.json", Files.good)
        let report = run(package, "authorization.json")
        #expect(report.exitStatus == 0)
        #expect(report.findings == [Finding(.note, file: "authorization.json",
                                            "ok: project 'p1' at https://api.example.com, Token Authorization (token redacted), advanced auth off")])
        #expect(!report.findings.description.contains("k1"))
    }

    @Test func advancedAuthWithTheRegisteredClassConventionAndNoNameFailsWithTheFrameworksMessage() throws {
        let package = try ScratchPackage()
        try package.write("authorization.json", Files.advanced(#""providerConvention": "registeredClass""#))
        let report = run(package, "authorization.json")
        #expect(report.exitStatus == 1)
        #expect(errors(report) == [Finding(.error, file: "authorization.json", key: "providerName",
                                           ConfigurationError.advancedAuthEnabledButProviderNotNamed.message)])
    }

    @Test func aFileWithoutAuthorizationFailsWithTheMessageTheClientLogs() throws {
        let package = try ScratchPackage()
        try package.write("authorization.json", #"{"projectToken": "p1", "baseURL": "https://api.example.com"}"#)
        let report = run(package, "authorization.json")
        #expect(report.exitStatus == 1)
        #expect(errors(report) == [Finding(.error, file: "authorization.json", key: "authorization", ConfigurationError.missingKey("authorization").message)])
    }

    @Test func aMissingAuthorizationAndAnUnnamedProviderAreBothReported() throws {
        let package = try ScratchPackage()
        try package.write("authorization.json", Files.advanced(#""providerConvention": "registeredClass""#, authorization: false))
        let report = run(package, "authorization.json")
        #expect(errors(report).map(\.message) == [
            ConfigurationError.missingKey("authorization").message, ConfigurationError.advancedAuthEnabledButProviderNotNamed.message,
        ])
    }

    @Test func theDefaultProviderNameWithoutAManifestIsAWarningQuotingTheClientsMessage() throws {
        let package = try ScratchPackage()
        try package.write("authorization.json", Files.advanced(""))
        let report = run(package, "authorization.json")
        #expect(report.exitStatus == 0)
        let warning = try #require(report.findings.first { $0.severity == .warning })
        #expect(warning.key == "providerName")
        #expect(warning.message.hasPrefix(ConfigurationError.advancedAuthEnabledWithoutProvider.message))
        #expect(warning.message.contains("sdkauth-providers.json"))
    }

    @Test func aProviderNameTheTargetsManifestDoesNotDeclareIsAnError() throws {
        let package = try ScratchPackage()
        try package.write("Sources/App/sdkauth-providers.json", Files.manifest("OtherProvider"))
        try package.write("Sources/App/Resources/authorization.json", Files.advanced(""))
        let report = run(package)
        #expect(report.exitStatus == 1)
        #expect(errors(report) == [Finding(.error, file: "Sources/App/Resources/authorization.json", key: "providerName",
                                           ConfigurationError.advancedAuthEnabledWithoutProvider.message)])
    }

    @Test func aRegisteredClassTheManifestDoesNotDeclareFailsWithTheAndroidMessage() throws {
        let package = try ScratchPackage()
        try package.write("sdkauth-providers.json", Files.manifest("ExponeaAuthProvider"))
        try package.write("authorization.json", Files.advanced(#""providerConvention": "registeredClass", "providerName": "MyApp.Missing""#))
        let report = run(package, "authorization.json")
        #expect(errors(report).map(\.message) == [ConfigurationError.registeredClassNotFound(name: "MyApp.Missing").message])
    }

    @Test func aProviderNameTheManifestDeclaresIsOk() throws {
        let package = try ScratchPackage()
        try package.write("Sources/App/sdkauth-providers.json", Files.manifest("ExponeaAuthProvider", "MyApp.ExampleAuthProvider"))
        try package.write("Sources/App/authorization.json", Files.advanced(""))
        try package.write("Sources/App/registered-authorization.json",
                          Files.advanced(#""providerConvention": "registeredClass", "providerName": "MyApp.ExampleAuthProvider""#))
        let report = run(package)
        #expect(report.exitStatus == 0)
        #expect(report.findings.map(\.severity) == [.note, .note])
        #expect(report.findings.allSatisfy { $0.message.hasPrefix("ok: ") })
    }

    @Test func aBuiltInModeNameResolvesWithoutAManifest() throws {
        let package = try ScratchPackage()
        try package.write("authorization.json", Files.advanced(#""providerName": "\#(BuiltInProviderName.idTokenRefresh)""#))
        let report = run(package, "authorization.json")
        #expect(report.findings.map(\.severity) == [.note])
        #expect(report.exitStatus == 0)
    }

    @Test func aManifestInAnotherTargetDoesNotCount() throws {
        let package = try ScratchPackage()
        try package.write("Sources/Other/sdkauth-providers.json", Files.manifest("ExponeaAuthProvider"))
        try package.write("Sources/App/authorization.json", Files.advanced(""))
        let report = run(package)
        #expect(report.findings.map(\.severity) == [.warning])
    }

    @Test(arguments: [
        (#"{"projectToken": "p1", "baseURL": "https://api.example.com", "authorization": "Token k1", "colour": 1}"#,
         ConfigurationError.unknownKeys(["colour"]), "colour"),
        (#"{"projectToken": "p1", "baseURL": "https://api.example.com", "authorization": "Basic a2V5"}"#,
         ConfigurationError.basicAuthenticationNotSupported, "authorization"),
        (#"{"projectToken": "p1", "baseURL": "ftp://example.com", "authorization": "Token k1"}"#,
         ConfigurationError.invalidBaseURL("ftp://example.com"), "baseURL"),
        (#"{"projectToken": "", "baseURL": "https://api.example.com"}"#, ConfigurationError.emptyProjectToken, "projectToken"),
        (#"{"baseURL": "https://api.example.com"}"#, ConfigurationError.missingKey("projectToken"), "projectToken"),
        (#"{"projectToken": "p1", "baseURL": "https://api.example.com", "advancedAuthEnabled": "yes"}"#,
         ConfigurationError.wrongType(key: "advancedAuthEnabled", expected: "a boolean"), "advancedAuthEnabled"),
    ])
    func aFileTheFrameworkRefusesFailsWithItsMessageAndKey(text: String, expected: ConfigurationError, key: String) throws {
        let package = try ScratchPackage()
        try package.write("authorization.json", text)
        let report = run(package, "authorization.json")
        #expect(report.exitStatus == 1)
        #expect(report.findings == [Finding(.error, file: "authorization.json", key: key, expected.message)])
    }

    @Test func aKeyOrFileNameThatCouldForgeALineIsEscaped() throws {
        let package = try ScratchPackage()
        try package.write("authorization.json", #"{"projectToken": "p1", "baseURL": "https://api.example.com", "x\nerror: forged": 1}"#)
        try package.write("a\nb-authorization.json", Files.good)
        let report = run(package)
        let lines = report.findings.map(\.description)
        #expect(lines.count == 2)
        #expect(lines.allSatisfy { !$0.contains("\n") })
        #expect(lines.contains("a\\u{a}b-authorization.json: ok: project 'p1' at https://api.example.com, Token Authorization (token redacted), advanced auth off"))
        #expect(lines.contains { $0.hasSuffix("(key 'x\\u{a}error: forged')") })
    }

    @Test func aMalformedFileFailsWithTheFrameworksMessage() throws {
        let package = try ScratchPackage()
        try package.write("authorization.json", "{not json")
        let report = run(package, "authorization.json")
        #expect(report.findings == [Finding(.error, file: "authorization.json",
                                            ConfigurationError.malformedFile(reason: "expected a JSON object of configuration keys").message)])
    }

    @Test func aPropertyListIsCheckedToo() throws {
        let package = try ScratchPackage()
        try package.write("SDKAuthorization.plist", """
        <?xml version="1.0" encoding="UTF-8"?>
        <plist version="1.0"><dict>
        <key>projectToken</key><string>p1</string>
        <key>baseURL</key><string>https://api.example.com</string>
        <key>advancedAuthEnabled</key><true/>
        <key>providerConvention</key><string>registeredClass</string>
        </dict></plist>
        """)
        let report = run(package)
        #expect(errors(report).map(\.message) == [
            ConfigurationError.missingKey("authorization").message, ConfigurationError.advancedAuthEnabledButProviderNotNamed.message,
        ])
        #expect(errors(report).allSatisfy { $0.file == "SDKAuthorization.plist" })
    }

    @Test func withoutAPackageDirectoryTheCurrentOneIsUsed() throws {
        let package = try ScratchPackage()
        try package.write("sdkauth-providers.json", Files.manifest("OtherProvider"))
        try package.write("Config/authorization.json", Files.advanced(""))
        let report = Doctor.run(["Config/authorization.json"], now: now, currentDirectory: package.url)
        #expect(report.findings == [Finding(.error, file: "Config/authorization.json", key: "providerName",
                                            ConfigurationError.advancedAuthEnabledWithoutProvider.message)])
    }

    @Test func aFileThatDoesNotExistIsAnError() throws {
        let package = try ScratchPackage()
        let report = run(package, "missing-authorization.json")
        #expect(report.exitStatus == 1)
        #expect(errors(report).first?.file == "missing-authorization.json")
        #expect(errors(report).first?.message.hasPrefix("The configuration file at ") == true)
    }

    @Test func anInvalidManifestIsReportedAndItsFilesAreNotPassed() throws {
        let package = try ScratchPackage()
        try package.write("sdkauth-providers.json", #"{"providers": [{"name": "ExponeaAuthProvider", "type": "Unqualified", "mode": "customerToken"}]}"#)
        try package.write("authorization.json", Files.good)
        let report = run(package)
        #expect(report.exitStatus == 1)
        #expect(errors(report).map(\.file) == ["sdkauth-providers.json:1:56", "authorization.json"])
        #expect(errors(report).first?.message.hasPrefix(#"entry "ExponeaAuthProvider": "Unqualified" is not a module-qualified Swift type name"#) == true)
    }
}
