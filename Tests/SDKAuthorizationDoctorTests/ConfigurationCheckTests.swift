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
        #expect(errors(report) == [Finding(.error, file: "authorization.json", key: "authorization", "The configuration key 'authorization' is required. (in 'authorization.json')")])
    }

    @Test func aMissingAuthorizationAndAnUnnamedProviderAreBothReported() throws {
        let package = try ScratchPackage()
        try package.write("authorization.json", Files.advanced(#""providerConvention": "registeredClass""#, authorization: false))
        let report = run(package, "authorization.json")
        #expect(errors(report).map(\.message) == [
            ConfigurationError.missingKey("authorization").appendingHint("in 'authorization.json'").message,
            ConfigurationError.advancedAuthEnabledButProviderNotNamed.message,
        ])
    }

    @Test func aMissingAuthorizationInAFileChoosingAModeWithKeysIsTheOnlyError() throws {
        // The doctor looks past the missing authorization with the mode's settings kept.
        let package = try ScratchPackage()
        try package.write("authorization.json", Files.advanced(
            #""providerName": "SDKAuthorization.TokenExchange", "tokenExchangeURL": "https://platform.example.com/exchange""#, authorization: false))
        let report = run(package, "authorization.json")
        #expect(errors(report).map(\.message) == [ConfigurationError.missingKey("authorization").appendingHint("in 'authorization.json'").message])
    }

    @Test func aBuiltInModeTheManifestRegistersKeepsItsKeys() throws {
        let package = try ScratchPackage()
        try package.write("Sources/App/sdkauth-providers.json",
                          #"{"providers": [{"name": "SDKAuthorization.Signature", "type": "SDKAuthorizationSignature.SignatureMode", "mode": "factory"}]}"#)
        try package.write("Sources/App/authorization.json", Files.advanced(#""providerName": "SDKAuthorization.Signature", "signatureAuthenticationEnabled": false"#))
        let report = run(package)
        #expect(report.exitStatus == 0)
        #expect(report.findings.filter { $0.severity != .note } == [], "\(report.findings)")
    }

    @Test func theDefaultProviderNameWithoutAManifestIsAWarningQuotingTheClientsMessage() throws {
        let package = try ScratchPackage()
        try package.write("authorization.json", Files.advanced(""))
        let report = run(package, "authorization.json")
        #expect(report.exitStatus == 0)
        let warning = try #require(report.findings.first { $0.severity == .warning })
        #expect(warning.key == "providerName")
        // It cannot see a provider registered in code: it says so, never that there is none.
        #expect(warning.message == "The doctor cannot see a provider registered as ExponeaAuthProvider: without sdkauth-providers.json it cannot see the providers the app registers in code or the classes its run-time lookup finds; if the app has none, it fails at start with \"Advanced authorization flag has been enabled without provider\"; declare it in sdkauth-providers.json to have it checked")
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

    @Test func aRegisteredClassOfTheTargetThatItsSourcesDoNotDeclareFailsWithTheAndroidMessage() throws {
        let package = try ScratchPackage()
        try package.write("Sources/MyApp/sdkauth-providers.json", Files.manifest("ExponeaAuthProvider"))
        try package.write("Sources/MyApp/App.swift", "final class Present {}")
        try package.write("Sources/MyApp/authorization.json", Files.advanced(#""providerConvention": "registeredClass", "providerName": "MyApp.Missing""#))
        let report = run(package)
        #expect(errors(report).map(\.message) == [ConfigurationError.registeredClassNotFound(name: "MyApp.Missing").message])
    }

    @Test func aMisspeltClassOfTheTargetsSourcesGetsDidYouMean() throws {
        let package = try ScratchPackage()
        try package.write("Sources/MyApp/sdkauth-providers.json", Files.manifest("ExponeaAuthProvider"))
        try package.write("Sources/MyApp/Providers.swift", "final class\n  PartnerAuthProvider: NSObject, AuthorizationProviderType {}\nstruct Other {}")
        try package.write("Sources/MyApp/authorization.json", Files.advanced(#""providerConvention": "registeredClass", "providerName": "MyApp.PartnerAuthProvidr""#))
        let report = run(package)
        #expect(errors(report).map(\.message) == [
            #"Registered MyApp.PartnerAuthProvidr class has not been found ("MyApp.PartnerAuthProvidr" is not declared in the sources of MyApp; did you mean "MyApp.PartnerAuthProvider"?)"#,
        ])
    }

    @Test func aRegisteredClassThatResolvesAtRunTimeIsNotAnErrorWithAManifest() throws {
        // Declared in the target's sources: the app's run-time lookup finds it.
        let package = try ScratchPackage()
        try package.write("Sources/MyApp/sdkauth-providers.json", Files.manifest("ExponeaAuthProvider"))
        try package.write("Sources/MyApp/Providers.swift", "final class Registered: NSObject, AuthorizationProviderType {}")
        try package.write("Sources/MyApp/authorization.json", Files.advanced(#""providerConvention": "registeredClass", "providerName": "MyApp.Registered""#))
        // In another module, which the doctor cannot load.
        try package.write("Sources/MyApp/other-authorization.json", Files.advanced(#""providerConvention": "registeredClass", "providerName": "PartnerKit.Provider""#))
        let report = run(package)
        #expect(report.exitStatus == 0, "\(report.findings)")
        let findings = report.findings.filter { $0.file?.hasSuffix("authorization.json") == true }
        #expect(findings.map(\.file) == ["Sources/MyApp/authorization.json", "Sources/MyApp/other-authorization.json"])
        #expect(findings.map(\.severity) == [.warning, .warning])
        #expect(findings.first?.message == "MyApp.Registered is not in sdkauth-providers.json, but the sources of MyApp declare it, so the app's run-time lookup finds it; declare it in the manifest to have it checked at build time")
        #expect(findings.last?.message == "The doctor cannot see the class PartnerKit.Provider: it is in the module PartnerKit, whose types the doctor cannot load, and the app's run-time lookup finds it there when the app links PartnerKit; if the app has none, it fails at start with \"Registered PartnerKit.Provider class has not been found\"; declare it in sdkauth-providers.json to have it checked")
    }

    @Test func aMisspeltBuiltInNameIsAnErrorSayingWhichNameItMeans() throws {
        let package = try ScratchPackage()
        try package.write("authorization.json", Files.advanced(#""providerName": "SDKAuthorization.IDTokenRefrsh""#))
        let report = run(package, "authorization.json")
        #expect(report.exitStatus == 1)
        #expect(errors(report) == [Finding(.error, file: "authorization.json", key: "providerName",
                                           #"Advanced authorization flag has been enabled without provider ("SDKAuthorization.IDTokenRefrsh" is not registered; did you mean "SDKAuthorization.IDTokenRefresh"?)"#)])
    }

    @Test func aBuiltInNameWhoseProductTheAppDoesNotLinkIsAnErrorNamingTheProduct() throws {
        let package = try ScratchPackage()
        try package.write("authorization.json", Files.advanced(#""providerName": "\#(BuiltInProviderName.idTokenRefresh)""#))
        try package.write("registered-authorization.json",
                          Files.advanced(#""providerConvention": "registeredClass", "providerName": "\#(BuiltInProviderName.signature)""#))
        let report = run(package, "--linked-products", "SDKAuthorization,SDKAuthorizationEngagement,SDKAuthorizationSignature",
                         "authorization.json", "registered-authorization.json")
        #expect(report.exitStatus == 1)
        #expect(errors(report) == [Finding(.error, file: "authorization.json", key: "providerName",
                                           #"Advanced authorization flag has been enabled without provider ("SDKAuthorization.IDTokenRefresh" is a mode in the product SDKAuthorizationIDToken: link SDKAuthorizationIDToken to the app's target and register IDTokenRefreshMode(refresh:) with the registry)"#)])
        #expect(report.findings.last?.file == "registered-authorization.json")
        #expect(report.findings.last?.message.hasPrefix("ok: ") == true)
        // Linked: ok, and no note about what is linked.
        let linked = run(package, "--linked-products", "SDKAuthorizationIDToken", "authorization.json")
        #expect(linked.findings.map(\.severity) == [.note])
        #expect(linked.exitStatus == 0)
        // None linked (a package that depends on no mode): every built-in name fails.
        #expect(run(package, "--linked-products", "", "registered-authorization.json").exitStatus == 1)
    }

    @Test func eachTargetIsJudgedByWhatItLinks() throws {
        let package = try ScratchPackage()
        let file = Files.advanced(#""providerName": "\#(BuiltInProviderName.idTokenRefresh)""#)
        try package.write("Sources/Linking/authorization.json", file)
        try package.write("Sources/Plain/authorization.json", file)
        try package.write("Config/authorization.json", file)
        let report = run(package, "--linked-products", "SDKAuthorizationIDToken",
                         "--target-products", package.url.appendingPathComponent("Sources/Linking").path + "=SDKAuthorizationIDToken,SDKAuthorization",
                         "--target-products", "Sources/Plain=SDKAuthorization")
        #expect(report.findings.map(\.file) == ["Config/authorization.json", "Sources/Linking/authorization.json", "Sources/Plain/authorization.json"])
        // Outside every target: the package's list; in a target: the target's.
        #expect(report.findings.map(\.severity) == [.note, .note, .error])
        #expect(report.findings.last?.message.contains("link SDKAuthorizationIDToken to the app's target") == true)
    }

    @Test func aProviderClassThatIsNotAnNSObjectFailsUnderTheiOSConvention() throws {
        let package = try ScratchPackage()
        try package.write("Sources/App/sdkauth-providers.json", #"{"providers": [{"name": "ExponeaAuthProvider", "type": "App.PlainProvider", "mode": "customerToken"}]}"#)
        try package.write("Sources/App/Providers.swift", """
            final class PlainProvider: AuthorizationProviderType {
                func getAuthorizationToken() async -> String? { nil }
            }
            """)
        try package.write("Sources/App/authorization.json", Files.advanced(""))
        // The Android convention does not ask for NSObject.
        try package.write("Sources/App/registered-authorization.json",
                          Files.advanced(#""providerConvention": "registeredClass", "providerName": "ExponeaAuthProvider""#))
        let report = run(package)
        #expect(report.exitStatus == 1)
        #expect(errors(report) == [Finding(.error, file: "Sources/App/authorization.json", key: "providerName",
                                           "Class ExponeaAuthProvider does not conform to NSObject")])
        #expect(report.findings.contains { $0.file == "Sources/App/registered-authorization.json" && $0.message.hasPrefix("ok: ") })
    }

    @Test(arguments: [
        ("final class P: NSObject, AuthorizationProviderType {}", false),
        ("final class P: Foundation.NSObject {}\nextension P: AuthorizationProviderType {}", false),
        ("class Base: NSObject {}\nfinal class P: Base, AuthorizationProviderType {}", false),
        ("final class P: ExternalBase, AuthorizationProviderType {}", false),   // may be an NSObject subclass
        ("final class P: AuthorizationProviderType {}", true),
        ("final class P {}\nextension P: AuthorizationProviderType {}", true),
        ("class Base {}\nfinal class P: Base, AuthorizationProviderType {}", true),
        ("final class P<T>: @unchecked Sendable, AuthorizationProviderType where T: Equatable {}", true),
        ("struct P: AuthorizationProviderType {}", false),
    ])
    func whetherTheSourcesShowAClassIsNotAnNSObject(source: String, certainlyNot: Bool) {
        #expect(ProviderSourceScan.isCertainlyNotNSObject("P", in: [Array(source.utf8)]) == certainlyNot, "\(source)")
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
        #expect(report.findings.map(\.severity) == [.note, .note])
        #expect(report.findings.last?.message.hasPrefix("SDKAuthorization.IDTokenRefresh resolves only in an app that links SDKAuthorizationIDToken; the doctor was not told") == true)
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
         ConfigurationError.unknownKeys(["colour"]).appendingHint("in 'authorization.json'"), "colour"),
        (#"{"projectToken": "p1", "baseURL": "https://api.example.com", "authorization": "Token k1", "baseUrl": "x"}"#,
         ConfigurationError.unknownKeys(["baseUrl"]).appendingHint("in 'authorization.json'; 'baseUrl': did you mean 'baseURL'?"), "baseUrl"),
        (#"{"projectToken": "p1", "baseURL": "https://api.example.com", "authorization": "Basic a2V5"}"#,
         ConfigurationError.basicAuthenticationNotSupported, "authorization"),
        (#"{"projectToken": "p1", "baseURL": "ftp://example.com", "authorization": "Token k1"}"#,
         ConfigurationError.invalidBaseURL("ftp://example.com"), "baseURL"),
        (#"{"projectToken": "", "baseURL": "https://api.example.com"}"#, ConfigurationError.emptyProjectToken, "projectToken"),
        (#"{"baseURL": "https://api.example.com"}"#, ConfigurationError.missingKey("projectToken").appendingHint("in 'authorization.json'"), "projectToken"),
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

    @Test func aBrazeDictionaryWithoutEnableSDKAuthenticationLeavesTheSignatureModeOffAndTheDoctorSaysSo() throws {
        let package = try ScratchPackage()
        try package.write("braze.json", #"{"projectToken": "p1", "baseURL": "https://api.example.com", "authorization": "Token k1", "Braze": {}}"#)
        try package.write("braze-on.json", #"{"projectToken": "p1", "baseURL": "https://api.example.com", "authorization": "Token k1", "Braze": {"EnableSDKAuthentication": true}}"#)
        let report = run(package, "braze.json", "braze-on.json")
        #expect(report.exitStatus == 0)
        #expect(report.findings.filter { $0.file == "braze.json" }.map(\.message).last
            == "the mode SDKAuthorization.Signature is off: the Braze dictionary has no EnableSDKAuthentication set to true, which turns it on")
        let on = report.findings.filter { $0.file == "braze-on.json" }.map(\.message)
        #expect(on.first == "ok: project 'p1' at https://api.example.com, Token Authorization (token redacted), advanced auth on, provider name SDKAuthorization.Signature")
        #expect(!on.contains { $0.contains(" is off") })
        // The app does not link the signature product: the Braze dictionary is a key of a mode it cannot register.
        let unlinked = run(package, "--linked-products", "SDKAuthorization,SDKAuthorizationEngagement", "braze.json")
        #expect(unlinked.findings.map(\.message) == [ConfigurationError.unknownKeys(["Braze"]).appendingHint(
            "in 'braze.json'; 'Braze' is a key of the mode SDKAuthorization.Signature, which is not registered: register SignatureMode() (product SDKAuthorizationSignature) with the registry that reads the file").message])
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
                                            "The configuration file is malformed: expected a JSON object of configuration keys. (in 'authorization.json', line 1, column 2)")])
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
            ConfigurationError.missingKey("authorization").appendingHint("in 'SDKAuthorization.plist'").message,
            ConfigurationError.advancedAuthEnabledButProviderNotNamed.message,
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
