import Foundation
import SDKAuthorizationTesting
import EngagementTestSupport
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationModeKit
@testable import SDKAuthorizationEngagement
@testable import SDKAuthorizationIDToken

/// Nested types for the registry's Swift runtime lookup.
enum ProviderNamespace {
    final class NestedAuthProvider: NSObject, AuthorizationProviderType {
        required override init() {}
        func getAuthorizationToken() -> String? { "nested.jwt.token" }
    }
}

final class GenericAuthProvider<Flavour>: NSObject, AuthorizationProviderType {
    required override init() {}
    func getAuthorizationToken() -> String? { "generic.jwt.token" }
}

struct StructNamedAsProvider {}

/// The bytes of a binary property list that nests `depth` one-element arrays.
func deeplyNestedBinaryPropertyList(depth: Int) -> Data {
    var bytes = Array("bplist00".utf8)
    var offsets: [Int] = []
    for index in 0..<depth {
        offsets.append(bytes.count)
        if index == depth - 1 {
            bytes.append(0xA0)
        } else {
            bytes += [0xA1, UInt8((index + 1) >> 8), UInt8((index + 1) & 0xFF)]
        }
    }
    let tableOffset = bytes.count
    for offset in offsets { bytes += [UInt8(offset >> 24 & 0xFF), UInt8(offset >> 16 & 0xFF), UInt8(offset >> 8 & 0xFF), UInt8(offset & 0xFF)] }
    func be64(_ value: Int) -> [UInt8] { (0..<8).reversed().map { UInt8(value >> ($0 * 8) & 0xFF) } }
    bytes += [0, 0, 0, 0, 0, 0, 4, 2] + be64(depth) + be64(0) + be64(tableOffset)
    return Data(bytes)
}

@Suite("Hostile input", .hangLimit)
struct HostileInputTests {
    // MARK: Parsers in linear time, bounded depth

    @Test func deeplyNestedJSONIsRefusedAtTheDepthLimitWithoutRecursingFurther() {
        for depth in [33, 10_000, 200_000] {
            let text = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
            #expect(throws: BoundedJSONReader.Failure.tooDeep(limit: 32)) { try BoundedJSONReader.parse(Array(text.utf8)) }
        }
        let allowed = String(repeating: "[", count: 32) + String(repeating: "]", count: 32)
        #expect(throws: Never.self) { try BoundedJSONReader.parse(Array(allowed.utf8)) }
    }

    @Test func aTenKilobyteJWTOfNestedArraysFailsAtOnceAsTooDeep() throws {
        let payload = #"{"sub":"u1","x":"# + String(repeating: "[", count: 5_000) + String(repeating: "]", count: 5_000) + "}"
        let token = "\(base64URL(Data(#"{"alg":"RS256"}"#.utf8))).\(base64URL(Data(payload.utf8))).c2ln"
        #expect(throws: JWTDecodingError.tooDeep(segment: "payload")) { try JWTClaims(decoding: token) }
        // setIDToken keeps the token (its exp is unreadable) and returns at once.
        let store = try IDTokenStore(authorizedDomains: ["a.example"], diagnostics: RecordingDiagnosticsSink())
        try store.setIDToken(token)
        #expect(store.currentToken == token)
    }

    @Test func parsingCostGrowsLinearlyWithTheInput() throws {
        // Count work, not time, and count it outside the parser: every byte it reads goes through
        // the subscript of a byte source that counts the reads.
        func readsPerByte(_ text: String) throws -> Double {
            let bytes = ReadCountingBytes(Array(text.utf8))
            _ = try BoundedJSONReader.parse(reading: bytes)
            return Double(bytes.counter.reads) / Double(bytes.count)
        }
        let shapes: [(name: String, make: (Int) -> String)] = [
            ("objects in an array", { "[" + Array(repeating: #"{"a":[1,2.5e3,"x\u00e9"],"b":true}"#, count: $0).joined(separator: ",") + "]" }),
            ("keys of one object", { "{" + (0..<$0).map { #""key\#($0)":\#($0)"# }.joined(separator: ",") + "}" }),
            ("one string of escapes", { "\"" + String(repeating: #"\u00e9\n\ud83d\ude00x"#, count: $0) + "\"" }),
            ("white space", { "[" + Array(repeating: " 1 ,\n\t", count: $0).joined() + " 2 ]" }),
            ("nested arrays", { "[" + Array(repeating: String(repeating: "[", count: 31) + String(repeating: "]", count: 31), count: $0).joined(separator: ",") + "]" }),
        ]
        for shape in shapes {
            let small = try readsPerByte(shape.make(1_000)), large = try readsPerByte(shape.make(4_000))
            // Linear: four times the input costs four times the reads, give or take the digits of longer keys.
            #expect(abs(large / small - 1) < 0.1, "\(shape.name): \(small) then \(large) reads per byte")
            #expect(large <= 4, "\(shape.name): \(large) reads per byte")
        }
    }

    @Test(arguments: [#"{"a":1,"a":2}"#, #"{"x":{"k":1,"k":1}}"#])
    func repeatedKeysAreRefused(text: String) {
        #expect(throws: BoundedJSONReader.Failure.self) { try BoundedJSONReader.parse(Array(text.utf8)) }
    }

    @Test(arguments: ["", "{", "[1,]", "{\"a\":}", "01", "1e999", "-", "\"\u{1}\"", "\"\\ud800\"", "\"\\u12\"", "nul", "{} x", "[\"\\q\"]",
                      String(repeating: "9", count: 65)])
    func malformedJSONIsATypedErrorNeverATrap(text: String) {
        #expect(throws: BoundedJSONReader.Failure.self) { try BoundedJSONReader.parse(Array(text.utf8)) }
    }

    @Test func validJSONIsReadExactly() throws {
        let value = try BoundedJSONReader.parse(Array(#" {"s":"a\"\\\/\n\u00e9\ud83d\ude00","n":-1.5e2,"t":true,"f":false,"z":null,"a":[]} "#.utf8))
        #expect(value == .object(["s": .string("a\"\\/\né😀"), "n": .number(-150), "t": .bool(true), "f": .bool(false), "z": .null, "a": .array([])]))
    }

    @Test func jwtWithARepeatedClaimOrOverTheSizeLimitIsRefused() {
        let repeated = "\(base64URL(Data(#"{"alg":"RS256"}"#.utf8))).\(base64URL(Data(#"{"sub":"a","sub":"b"}"#.utf8))).c2ln"
        #expect(throws: JWTDecodingError.duplicateClaim(name: "sub")) { try JWTClaims(decoding: repeated) }
        let huge = makeJWT(["sub": String(repeating: "x", count: JWTClaims.maximumTokenLength)])
        #expect(throws: JWTDecodingError.tooLarge(limit: JWTClaims.maximumTokenLength)) { try JWTClaims(decoding: huge) }
    }

    // MARK: Fuzz findings

    /// Found by `Scripts/fuzz parsers`: URLComponents trapped on a template that set an invalid
    /// percent-encoded path.
    @Test(arguments: ["/v2/<projectToken>/use>/inbox?v=1&p=<projectToken>", "/a b", "/a#b", "/a<b", "/x?q=a b", "https://h.example/a>b"])
    func endpointTemplatesAURLCannotCarryAreRefusedNotTrapped(template: String) throws {
        var policy = AuthorizationPolicy()
        #expect(throws: ConfigurationError.self) { try policy.add(Endpoint("e", path: template), scheme: .none) }
        // Built directly (bypassing the policy's check), the URL is a value or a typed error, never a trap.
        let built = try? Endpoint("e", path: template).url(baseURL: URL(string: "https://api.example.com"), parameters: ["projectToken": "p"])
        #expect(built?.absoluteString.contains(" ") != true)
    }

    /// Found by `Scripts/fuzz parsers`: a combining mark after '@' made it a different Character, and
    /// the password survived sanitizing.
    @Test(arguments: ["https://user:hunter2-SECRET@\u{485}", "https://user:hunter2-SECRET@\u{301}host/x", "user:hunter2-SECRET@\u{485}host",
                      "https://user:hunter2-SECRET@host?\u{301}q"])
    func aCombiningMarkCannotHideUserInfoFromSanitizing(value: String) {
        #expect(!ConfigurationError.sanitizedURLText(value).contains("SECRET"))
    }

    // MARK: Configuration files

    @Test func configurationJSONWithARepeatedKeyIsRefused() {
        let text = #"{"projectToken":"p1","baseURL":"https://a.example","authorization":"Token good","authorization":"Token evil"}"#
        #expect(throws: ConfigurationError.duplicateKey("authorization")) {
            try AuthorizationConfiguration(data: Data(text.utf8), format: .json)
        }
    }

    @Test func propertyListWithARepeatedKeyIsRefused() {
        let plist = """
        <?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict>
        <key>projectToken</key><string>p1</string><key>baseURL</key><string>https://a.example</string>
        <key>projectToken</key><string>p2</string></dict></plist>
        """
        #expect(throws: ConfigurationError.duplicateKey("projectToken")) {
            try AuthorizationConfiguration(data: Data(plist.utf8), format: .propertyList)
        }
    }

    @Test func deeplyNestedXMLPropertyListIsRefusedBeforeParsing() {
        let depth = 20_000
        let plist = "<?xml version=\"1.0\"?><plist version=\"1.0\"><dict><key>projectToken</key>"
            + String(repeating: "<array>", count: depth) + String(repeating: "</array>", count: depth) + "</dict></plist>"
        #expect(throws: ConfigurationError.self) { try AuthorizationConfiguration(data: Data(plist.utf8.prefix(65_536)), format: .propertyList) }
        #expect(throws: ConfigurationError.fileTooLarge(limit: 65_536)) { try AuthorizationConfiguration(data: Data(plist.utf8), format: .propertyList) }
    }

    @Test func deeplyNestedBinaryPropertyListIsRefusedBeforeParsing() {
        let data = deeplyNestedBinaryPropertyList(depth: 20_000)
        #expect(throws: ConfigurationError.self) { try AuthorizationConfiguration(data: data, format: .propertyList) }
        #expect(throws: ConfigurationError.malformedFile(reason: "expected a property list whose root is a dictionary of configuration keys with plain values")) {
            try AuthorizationConfiguration(data: deeplyNestedBinaryPropertyList(depth: 5_000), format: .propertyList)
        }
    }

    @Test func aFileLargerThanTheLimitIsNotReadWhole() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("sdkauth-huge-\(UUID().uuidString).json")
        let padding = String(repeating: " ", count: 10 * 65_536)
        try Data((#"{"projectToken":"p1","baseURL":"https://a.example"}"# + padding).utf8).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        #expect(throws: ConfigurationError.fileTooLarge(limit: AuthorizationConfiguration.maximumFileSize)) {
            try AuthorizationConfiguration(contentsOf: url)
        }
    }

    // MARK: Strict configuration

    @Test func baseURLWithUserInfoIsRefusedAndThePasswordIsNeverRepeated() {
        for value in ["https://user:hunter2-password@api.example.com", "https://:hunter2-password@api.example.com/v1", "https://user@api.example.com"] {
            do {
                _ = try AuthorizationConfiguration(projectToken: "p", baseURL: value, authorization: "Token k")
                Issue.record("accepted \(value)")
            } catch {
                #expect(!error.message.contains("hunter2"), "\(error.message)")
                #expect(error.message.contains("api.example.com"))
            }
        }
    }

    @Test(arguments: ["https://api.example.com/?api_key=topsecret-query", "https://api.example.com/#topsecret-query", "htps://u:topsecret-query@x"])
    func invalidBaseURLMessagesNeverRepeatTheQueryOrPassword(value: String) {
        do {
            _ = try AuthorizationConfiguration(projectToken: "p", baseURL: value, authorization: "Token k")
            Issue.record("accepted \(value)")
        } catch {
            #expect(!error.message.contains("topsecret"), "\(error.message)")
        }
    }

    @Test(arguments: ["ExponeaAuthProvider\nERROR fake log line", "Exponea\u{202E}redivorP", "", "  ", " ExponeaAuthProvider", "A\u{0}B", String(repeating: "A", count: 257)])
    func providerNamesThatCouldForgeALogLineAreRefused(name: String) {
        for lookup in [ProviderLookup.implicitName(name), .registeredClassName(name)] {
            do {
                _ = try AuthorizationConfiguration(projectToken: "p", baseURL: "https://a.example", authorization: "Token k", providerLookup: lookup)
                Issue.record("accepted \(name.debugDescription)")
            } catch {
                #expect(!error.message.contains("\n"))
                #expect(!error.message.contains("\u{202E}"))
            }
        }
    }

    @Test(arguments: [".", ".."])
    func projectTokenThatWouldMoveThePathIsRefused(token: String) {
        #expect(throws: ConfigurationError.self) { try AuthorizationConfiguration(projectToken: token, baseURL: "https://a.example", authorization: "Token k") }
    }

    @Test(arguments: [("projectToken", " p1"), ("projectToken", "p1 "), ("baseURL", " https://a.example"), ("authorization", "Token k1 "), ("providerName", "ExponeaAuthProvider ")])
    func surroundingWhitespaceIsRefusedByKey(key: String, value: String) {
        #expect(throws: ConfigurationError.surroundingWhitespace(key: key)) {
            try AuthorizationConfiguration(
                projectToken: key == "projectToken" ? value : "p1",
                baseURL: key == "baseURL" ? value : "https://a.example",
                authorization: key == "authorization" ? value : "Token k1",
                providerLookup: key == "providerName" ? .implicitName(value) : .default
            )
        }
    }

    @Test(arguments: ["Token", "bearer", "Token a b", "Bearer Token x", "Bearer a:b", "k\u{2028}ey", "k\u{85}ey", "caf\u{E9}"])
    func valuesThatOnlyLookLikeACredentialAreRefused(value: String) {
        #expect(throws: ConfigurationError.self) { try ProjectAuthorization(parsing: value) }
    }

    @Test(arguments: [-1, 86_401, 1e300, .nan, .infinity])
    func numericOptionsOutOfRangeAreRefused(seconds: Double) {
        #expect(throws: ConfigurationError.self) {
            try AuthorizationConfiguration(projectToken: "p", baseURL: "https://a.example", authorization: "Token k", customerTokenCaching: .honoringExpiry(leeway: seconds))
        }
        #expect(throws: ConfigurationError.self) {
            try AuthorizationConfiguration(projectToken: "p", baseURL: "https://a.example", authorization: "Token k", customerTokenCaching: .honoringExpiry(leeway: 60, maximumAge: seconds))
        }
        #expect(throws: ConfigurationError.self) { try IDTokenStore(authorizedDomains: ["a.example"], options: .init(refreshTimeout: seconds)) }
        #expect(throws: ConfigurationError.self) { try IDTokenStore(authorizedDomains: ["a.example"], options: .init(staleLeeway: seconds)) }
    }

    @Test func timeoutMessageOfAnyDurationDoesNotTrap() {
        #expect(IDTokenStore.timeoutMessage(after: 1e300).hasPrefix("setIDToken was not called within"))
        #expect(IDTokenStore.timeoutMessage(after: -1e300).hasPrefix("setIDToken was not called within"))
    }

    // MARK: No secret in any output

    @Test func noWholeSecretInDescriptionsDumpsOrMirrors() async throws {
        let apiKey = "api-key-0123456789-SECRET"
        let jwt = makeJWT(["sub": "user-1", "exp": 4_000_000_000, "secret": "JWT-PAYLOAD-SECRET"])
        let store = try IDTokenStore(authorizedDomains: ["api.example.com"], diagnostics: RecordingDiagnosticsSink())
        try store.setIDToken(jwt)
        let configuration = try AuthorizationConfiguration(projectToken: "p", baseURL: "https://api.example.com", authorization: "Token \(apiKey)", advancedAuthEnabled: true)
        let client = try AuthorizedHTTPClient(configuration: configuration, provider: store, transport: RecordingTransport(), diagnostics: RecordingDiagnosticsSink())
        let cache = CachingAuthorizationProvider(wrapping: ScriptedProvider(.token(jwt)))
        _ = try await cache.credential(for: AuthorizationContext(endpoint: nil, url: URL(string: "https://api.example.com")!))
        let request = OutgoingRequest(method: "GET", url: URL(string: "https://api.example.com/x")!, headers: ["Authorization": "Bearer \(jwt)"])
        let response = ServerResponse(statusCode: 401, headers: ["WWW-Authenticate": "Bearer token=\(jwt)"])
        struct LeakyError: Error, CustomStringConvertible { let token: String; var description: String { "failed with \(token)" } }
        let error = RequestError.providerFailed(LeakyError(token: jwt), endpoint: .appInboxFetch)
        let subjects: [Any] = [client, client.authorizer, store, cache, configuration, configuration.authorization as Any, request, response, error,
                               Credential.bearer(jwt), Credential.authorization(scheme: "Token", apiKey)]
        for subject in subjects {
            var dumped = ""
            dump(subject, to: &dumped)
            for text in [String(describing: subject), String(reflecting: subject), dumped] {
                #expect(!text.contains(apiKey), "\(type(of: subject)): \(text)")
                #expect(!text.contains(jwt), "\(type(of: subject)): \(text)")
                #expect(!text.contains("SECRET"), "\(type(of: subject)): \(text)")
            }
        }
    }

    @Test func providerErrorHoldingTheTokenIsNeitherLoggedNorDescribed() async throws {
        struct LeakyError: Error, CustomStringConvertible { var description: String { "failed with LEAKED-TOKEN-VALUE" } }
        let sink = RecordingDiagnosticsSink()
        let client = try AuthorizedHTTPClient(configuration: engagementConfiguration(advancedAuthEnabled: true),
                                              provider: ScriptedProvider(.failure(LeakyError())), transport: RecordingTransport(), diagnostics: sink)
        do {
            _ = try await client.send(.appInboxFetch)
        } catch {
            #expect(!error.description.contains("LEAKED"))
            #expect(!String(reflecting: error).contains("LEAKED"))
            #expect(error.underlyingError is LeakyError)   // the app still gets its own error
        }
        #expect(!sink.diagnostics.contains { $0.message.contains("LEAKED") })
    }

    @Test func endpointAndSchemeNamesCannotForgeALogLine() {
        let forged: Endpoint.ID = "inbox\n[SDKAuthorization] error: forged"
        #expect(!RequestError.unknownEndpoint(forged).description.contains("\n"))
        #expect(!AuthorizationScheme("sig\u{2028}nature").description.contains("\u{2028}"))
    }

    @Test func redactionNeverShowsMoreThanAQuarterOfASecret() {
        for length in [1, 8, 13, 23, 24, 25, 40, 400] {
            let secret = String(repeating: "k", count: length)
            let shown = Redaction.redact(secret).prefix { $0 == "k" }.count
            #expect(shown * 4 <= length, "\(length): \(Redaction.redact(secret))")
        }
        #expect(Redaction.redact("thirteen-char") == "(redacted, 13 chars)")
        let printed = "\(String(reflecting: try! ProjectAuthorization.token("abcdefghijklm")))"
        #expect(!printed.contains("abcdef"))
    }

    // MARK: Bounded trust

    @Test func cachedTokenIsAskedForAgainAfterTheMaximumAgeWhateverItsExpSays() async throws {
        let clock = ManualClock()
        let centuryToken = makeJWT(["sub": "u1", "exp": clock.now().timeIntervalSince1970 + 100 * 365 * 86_400])
        let inner = ScriptedProvider(.token(centuryToken))
        let cache = CachingAuthorizationProvider(wrapping: inner, leeway: 60, maximumAge: 600, clock: clock)
        let context = AuthorizationContext(endpoint: nil, url: URL(string: "https://api.example.com")!)
        _ = try await cache.credential(for: context)
        clock.advance(by: 599)
        _ = try await cache.credential(for: context)
        #expect(inner.requestedContexts.count == 1)
        clock.advance(by: 1)
        _ = try await cache.credential(for: context)
        #expect(inner.requestedContexts.count == 2)
    }

    // MARK: Registry finds every type Swift can name

    @Test func nestedAndGenericProviderClassesAreFoundByName() throws {
        for name in ["SDKAuthorizationModesTests.ProviderNamespace.NestedAuthProvider", "SDKAuthorizationModesTests.GenericAuthProvider<Swift.Int>",
                     "SDKAuthorizationModesTests.GenericAuthProvider<SDKAuthorizationModesTests.StructNamedAsProvider>"] {
            for lookup in [ProviderLookup.implicitName(name), .registeredClassName(name)] {
                let client = try AuthorizedHTTPClient(
                    configuration: AuthorizationConfiguration(projectToken: "p", baseURL: "https://a.example", authorization: "Token k",
                                                              advancedAuthEnabled: true, providerLookup: lookup),
                    transport: RecordingTransport(), diagnostics: RecordingDiagnosticsSink()
                )
                #expect((client.provider as? CustomerTokenProvider)?.providerTypeName.hasPrefix("SDKAuthorizationModesTests.") == true, "\(name)")
            }
        }
    }

    @Test func aStructNamedAsTheProviderGetsTheMessageThatFits() {
        let name = "SDKAuthorizationModesTests.StructNamedAsProvider"
        #expect(throws: ConfigurationError.providerIsNotNSObject(name: name)) {
            try AuthorizedHTTPClient(configuration: AuthorizationConfiguration(projectToken: "p", baseURL: "https://a.example", authorization: "Token k",
                                                                               advancedAuthEnabled: true, providerLookup: .implicitName(name)),
                                     diagnostics: RecordingDiagnosticsSink())
        }
        #expect(throws: ConfigurationError.registeredClassDoesNotImplement(name: name)) {
            try AuthorizedHTTPClient(configuration: AuthorizationConfiguration(projectToken: "p", baseURL: "https://a.example", authorization: "Token k",
                                                                               advancedAuthEnabled: true, providerLookup: .registeredClassName(name)),
                                     diagnostics: RecordingDiagnosticsSink())
        }
    }

    @Test(arguments: ["SDKAuthorizationModesTests.Nope", "Nope", "SDKAuthorizationModesTests.ProviderNamespace.Missing", "1Bad.Name", "A.B<", "A.B<C.D,E.F,G.H,I.J>",
                      "A.B<C.D<E.F<G.H<I.J>>>>", "A.B.C.D.E.F.G"])
    func namesThatNameNoTypeAreNotFound(name: String) {
        #expect(SwiftTypeLookup.type(named: name) == nil)
    }
}

/// Bytes that count every read of their subscript, for tests that measure a parser's work from
/// outside it.
struct ReadCountingBytes: RandomAccessCollection {
    final class Counter { var reads = 0 }

    private let storage: [UInt8]
    let counter = Counter()

    init(_ storage: [UInt8]) { self.storage = storage }

    var startIndex: Int { 0 }
    var endIndex: Int { storage.count }

    subscript(position: Int) -> UInt8 {
        counter.reads += 1
        return storage[position]
    }
}
