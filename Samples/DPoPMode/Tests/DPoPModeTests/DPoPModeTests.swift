import Crypto
import DPoPMode
import Foundation
import SDKAuthorization
import SDKAuthorizationModeKit
import SDKAuthorizationEngagement
import SDKAuthorizationTesting
import Testing

@Suite struct DPoPModeConfigurationTests {
    let clock = ManualClock()
    let sink = RecordingDiagnosticsSink()
    let registry = ProviderRegistry()
    let privateKey = P256.Signing.PrivateKey()

    init() {
        registry.register(DPoPAuthorizationMode(signer: P256DPoPSigner(privateKey: privateKey)))
    }

    /// A configuration file holding the Engagement keys, the mode's name, and `extra`.
    func writeFile(_ extra: String) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dpop-mode-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent("authorization.json")
        try Data("""
        {
          "projectToken": "project-1",
          "baseURL": "https://api.example.com",
          "authorization": "Token api-key-1",
          "advancedAuthEnabled": true,
          "providerName": "DPoPMode.DPoP"\(extra.isEmpty ? "" : ",\n  " + extra)
        }
        """.utf8).write(to: url)
        return url
    }

    func read(_ extra: String) throws -> AuthorizationConfiguration {
        let url = try writeFile(extra)
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        return try AuthorizationConfiguration(contentsOf: url, registry: registry)
    }

    @Test func theModeIsChosenByNameFromAConfigurationFileWithItsOwnKeysAndSendsThroughTheClientsTransport() async throws {
        let configuration = try read(#""dpopTokenURL": "https://auth.example.com/token", "dpopClientID": "client-1""#)
        #expect(configuration.modeSettings.url("dpopTokenURL") == tokenURL)
        let transport = RecordingTransport { request in
            guard request.url == tokenURL else { return ServerResponse(statusCode: 200, body: Data("{}".utf8)) }
            return ServerResponse(statusCode: 200, body: Data(#"{"access_token":"token-file","token_type":"DPoP","expires_in":600}"#.utf8))
        }
        let policy = AuthorizationPolicy(rules: [try AuthorizationRule(host: "api.example.com", path: "/dpop/**", scheme: .bearer)])
        let client = try AuthorizedHTTPClient(configuration: configuration, policy: policy, registry: registry, transport: transport,
                                              diagnostics: sink, clock: clock)
        let provider = try #require(client.provider as? DPoPProvider)
        #expect(provider.tokenURL == tokenURL && provider.clientID == "client-1" && provider.nonceRetry)
        _ = try await client.send(OutgoingRequest(method: "POST", url: URL(string: "https://api.example.com/dpop/orders?x=1")!))
        #expect(transport.requests.map(\.url.path) == ["/token", "/dpop/orders"])
        let sent = try #require(transport.requests.last)
        #expect(sent.value(forHeader: "Authorization") == "DPoP token-file")
        let proof = try ReadProof(try #require(sent.value(forHeader: "DPoP")))
        #expect(proof.signatureIsValid)
        #expect(proof.jwk == privateKey.publicKey.rawRepresentation)
        #expect(proof.htm == "POST" && proof.htu == "https://api.example.com/dpop/orders" && proof.ath == expectedATH("token-file"))
    }

    @Test func theNonceRetrySwitchIsReadFromTheFile() throws {
        let configuration = try read(#""dpopTokenURL": "https://auth.example.com/token", "dpopClientID": "client-1", "dpopNonceRetry": false"#)
        let client = try AuthorizedHTTPClient(configuration: configuration, policy: AuthorizationPolicy(rules: [try AuthorizationRule(host: "api.example.com", scheme: .bearer)]),
                                              registry: registry, transport: RecordingTransport(), diagnostics: sink, clock: clock)
        #expect((client.provider as? DPoPProvider)?.nonceRetry == false)
    }

    @Test func aMisspeltKeyIsRefusedWithDidYouMean() throws {
        do {
            _ = try read(#""dpopTokenUrl": "https://auth.example.com/token", "dpopClientID": "client-1""#)
            Issue.record("read")
        } catch let error as ConfigurationError {
            #expect(error.code == .unknownKeys)
            #expect(error.keys == ["dpopTokenUrl"])
            #expect(error.message.contains("'dpopTokenUrl': did you mean 'dpopTokenURL'?"))
        }
    }

    @Test func aFileWithoutTheClientIDIsRefused() {
        do {
            _ = try read(#""dpopTokenURL": "https://auth.example.com/token""#)
            Issue.record("read")
        } catch let error as ConfigurationError {
            // The key, and the file it was missing from.
            #expect(error.code == .missingKey)
            #expect(error.message == "The configuration key 'dpopClientID' is required. (in 'authorization.json')")
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test(arguments: [
        ("http://auth.example.com/token", "'http://auth.example.com/token' uses http, which is allowed only on a loopback host (localhost, 127.0.0.0/8, [::1]); use https"),
        ("https://auth.example.com/token?secret=s1", "'https://auth.example.com/token?...' is not an absolute https URL with a host (and no query or fragment)"),
        ("https://user:secret-2@auth.example.com/token", "user info ('user:password@') is not allowed in 'https://...@auth.example.com/token'"),
        ("token", "'token' is not an absolute https URL with a host (and no query or fragment)"),
    ])
    func aTokenURLThatIsNotHTTPSOrLoopbackIsRefused(url: String, reason: String) {
        // The key and why, and the file it was read from.
        #expect(throws: ConfigurationError.invalidValue(key: "dpopTokenURL", reason: reason).appendingHint("in 'authorization.json'")) {
            try read(#""dpopTokenURL": "\#(url)", "dpopClientID": "client-1""#)
        }
        #expect(!reason.contains("secret"))
    }

    @Test(arguments: ["http://127.0.0.1:8080/token", "http://localhost:9000/token", "http://[::1]:8080/token", "https://auth.example.com:8443/token"])
    func anHTTPSOrLoopbackTokenURLIsAccepted(url: String) throws {
        let configuration = try read(#""dpopTokenURL": "\#(url)", "dpopClientID": "client-1""#)
        #expect(configuration.modeSettings.url("dpopTokenURL")?.absoluteString == url)
    }

    @Test(arguments: ["", "has space", String(repeating: "c", count: 257), "caf\u{E9}", "tab\t"])
    func aClientIDThatIsNotVisibleASCIIIsRefused(clientID: String) throws {
        let json = String(decoding: try JSONSerialization.data(withJSONObject: clientID, options: .fragmentsAllowed), as: UTF8.self)
        #expect(throws: ConfigurationError.invalidValue(key: "dpopClientID", reason: "must be 1 to 256 visible ASCII characters (no spaces or control characters)")
            .appendingHint("in 'authorization.json'")) {
            try read(#""dpopTokenURL": "https://auth.example.com/token", "dpopClientID": \#(json)"#)
        }
    }

    @Test func aProviderMadeDirectlyRefusesTheValuesAConfigurationFileIsRefusedFor() throws {
        #expect(throws: ConfigurationError.invalidValue(key: "dpopTokenURL", reason: "'http://auth.example.com/token' uses http, which is allowed only on a loopback host (localhost, 127.0.0.0/8, [::1]); use https")) {
            try DPoPProvider(tokenURL: URL(string: "http://auth.example.com/token")!, clientID: "client-1", signer: P256DPoPSigner(), transport: RecordingTransport())
        }
        #expect(throws: ConfigurationError.invalidValue(key: "dpopClientID", reason: "must be 1 to 256 visible ASCII characters (no spaces or control characters)")) {
            try DPoPProvider(tokenURL: tokenURL, clientID: "has space", signer: P256DPoPSigner(), transport: RecordingTransport())
        }
    }

    @Test func aClientIDIsFormEncodedInTheTokenRequest() async throws {
        let transport = RecordingTransport { request in
            ServerResponse(statusCode: 200, body: Data(#"{"access_token":"t","token_type":"DPoP","expires_in":600}"#.utf8))
        }
        let provider = try DPoPProvider(tokenURL: tokenURL, clientID: "a&b=c+d%", signer: P256DPoPSigner(), transport: transport, clock: clock)
        _ = try await provider.credential(for: AuthorizationContext(endpoint: nil, url: URL(string: "https://api.example.com/x")!))
        #expect(String(decoding: transport.requests.first?.body ?? Data(), as: UTF8.self) == "grant_type=client_credentials&client_id=a%26b%3Dc%2Bd%25")
    }

    @Test func theModeMadeInCodeWithoutATransportIsRefused() throws {
        let context = ProviderFactoryContext(baseURL: URL(string: "https://api.example.com")!, configuration: "code", clock: clock, diagnostics: sink, observer: nil,
                                             modeSettings: ModeSettings(["dpopTokenURL": .url(tokenURL), "dpopClientID": .string("client-1")]))
        #expect(throws: ConfigurationError.dpopTransportMissing) { try DPoPAuthorizationMode().makeProvider(for: context) }
    }

    @Test func theModeChecksItsSettingsAgainEvenWhenTheRegistryDidNot() throws {
        // A registry of another kind may hand the mode settings it never checked.
        let context = ProviderFactoryContext(baseURL: URL(string: "https://api.example.com")!, configuration: "code", clock: clock, diagnostics: sink, observer: nil,
                                             modeSettings: ModeSettings(["dpopTokenURL": .url(tokenURL), "dpopClientID": .string("client-1"),
                                                                         "dpopNonceRetry": .string("no")]),
                                             transport: RecordingTransport())
        #expect(throws: ConfigurationError.wrongType(key: "dpopNonceRetry", expected: "a boolean")) { try DPoPAuthorizationMode().makeProvider(for: context) }
    }

    /// The file the authorization doctor reads (`sdkauth-config --mode-description`, passed by its
    /// plugin for every target that links this package) says what `settingKeys` says, as the core's
    /// `modeDescription(product:)` writes it.
    @Test func theModeDescriptionFileForTheDoctorMatchesTheDeclaredKeys() throws {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/DPoPMode/sdkauth-mode.json")
        let written = String(decoding: try Data(contentsOf: file), as: UTF8.self)
        #expect(written == DPoPAuthorizationMode.modeDescription(product: "DPoPMode"))
    }
}

@Suite struct DPoPSecrecyTests {
    @Test func theProviderSignerAndCredentialShowNoTokenProofOrKey() async throws {
        let fixture = try DPoPFixture()
        try await fixture.get()
        let credential = try await fixture.provider.credential(for: AuthorizationContext(endpoint: nil, url: URL(string: "https://api.example.com/x")!))
        var dumped = ""
        dump(fixture.provider, to: &dumped)
        dump(fixture.signer, to: &dumped)
        dump(credential, to: &dumped)
        let texts = [fixture.provider.description, String(reflecting: fixture.provider), fixture.signer.description, String(reflecting: fixture.signer),
                     credential.description, String(reflecting: credential), dumped]
        fixture.expectNoSecret(in: texts)
        #expect(!texts.joined().contains(try #require(credential.value)))
        #expect(fixture.provider.description == "DPoPProvider(https://auth.example.com/token, token: set, redacted)")
        #expect(credential.addedFieldNames == ["DPoP"])
    }

    @Test func theCheckOfSecretsFindsAKeyThatIsShown() {
        // The check the test above relies on does see a secret that is there.
        let key = P256.Signing.PrivateKey()
        let shown = "key: \(base64URL(key.rawRepresentation))"
        #expect(shown.contains(base64URL(key.rawRepresentation)))
        #expect(!P256DPoPSigner(privateKey: key).description.contains(base64URL(key.rawRepresentation)))
    }
}

@Suite struct DPoPChallengeTests {
    /// The provider's decision for a 401 carrying `field` (and a usable nonce).
    func decision(for field: String, nonce: String? = "nonce-1") async throws -> RejectionDecision {
        let provider = try DPoPProvider(tokenURL: tokenURL, clientID: "c", signer: P256DPoPSigner(), transport: RecordingTransport(), clock: ManualClock(),
                                        diagnostics: RecordingDiagnosticsSink())
        var headers = ["WWW-Authenticate": field]
        if let nonce { headers["DPoP-Nonce"] = nonce }
        return await provider.credentialRejected(.authorization(scheme: "DPoP", "t"), response: ServerResponse(statusCode: 401, headers: headers),
                                                 context: AuthorizationContext(endpoint: nil, url: URL(string: "https://api.example.com/x")!))
    }

    @Test(arguments: [
        #"DPoP error="use_dpop_nonce", error_description="Resource server requires nonce in DPoP proof""#,
        #"Bearer realm="api", error="invalid_token", DPoP algs="ES256 PS256", error="use_dpop_nonce""#,
        #"Basic realm="a, b", DPoP error=use_dpop_nonce"#,
        #"Negotiate abc123==, dpop ERROR = "use_dpop_nonce""#,
        #"DPoP realm="say \"hi\", error=\"invalid_dpop_proof\"", error="use_dpop_nonce""#,
        #"DPoP error="use_dpop_nonce"#,
        String(repeating: "Basic, ", count: 15) + #"DPoP error="use_dpop_nonce""#,
        #"DPoP realm="\#(String(repeating: "x", count: 8_000))", error="use_dpop_nonce""#,
    ])
    func aNonceChallengeAmongOthersIsFound(field: String) async throws {
        #expect(try await decision(for: field) == .retryWithoutRefresh)
    }

    @Test(arguments: [
        #"Bearer error="use_dpop_nonce""#,
        #"DPoP error="invalid_dpop_proof""#,
        #"DPoP algs="ES256""#,
        #"error="use_dpop_nonce", DPoP"#,
        "",
        "\u{0}\u{1}\"\"\"===,,,",
        String(repeating: "DPoP error=\"x\", ", count: 600) + #"DPoP error="use_dpop_nonce""#,
        // Longer than 8 KiB: not read at all.
        #"DPoP realm="\#(String(repeating: "x", count: 8_200))", error="use_dpop_nonce""#,
        // Past the 16th challenge: not read.
        String(repeating: "Basic, ", count: 16) + #"DPoP error="use_dpop_nonce""#,
        // An escaped quote does not end a quoted string.
        #"DPoP realm="x\", error=use_dpop_nonce, y=\"", error="invalid_dpop_proof""#,
    ])
    func noNonceChallengeMeansFail(field: String) async throws {
        #expect(try await decision(for: field) == .fail)
    }

    @Test func aNonceChallengeWithoutANonceFails() async throws {
        #expect(try await decision(for: #"DPoP error="use_dpop_nonce""#, nonce: nil) == .fail)
    }

    @Test func withoutADPoPChallengeTheJSONBodysErrorIsRead() async throws {
        let provider = try DPoPProvider(tokenURL: tokenURL, clientID: "c", signer: P256DPoPSigner(), transport: RecordingTransport(), clock: ManualClock(),
                                        diagnostics: RecordingDiagnosticsSink())
        let context = AuthorizationContext(endpoint: nil, url: URL(string: "https://api.example.com/x")!)
        let nonceBody = ServerResponse(statusCode: 401, headers: ["DPoP-Nonce": "nonce-1"], body: Data(#"{"error":"use_dpop_nonce"}"#.utf8))
        #expect(await provider.credentialRejected(.authorization(scheme: "DPoP", "t"), response: nonceBody, context: context) == .retryWithoutRefresh)
        // The challenge wins over the body.
        var proofChallenge = nonceBody
        proofChallenge.headers["WWW-Authenticate"] = #"DPoP error="invalid_dpop_proof""#
        #expect(await provider.credentialRejected(.authorization(scheme: "DPoP", "t"), response: proofChallenge, context: context) == .fail)
        // A body over 4 KiB is not read.
        let large = ServerResponse(statusCode: 401, headers: ["DPoP-Nonce": "nonce-1"],
                                   body: Data(#"{"error":"use_dpop_nonce","pad":"\#(String(repeating: "x", count: 4_100))"}"#.utf8))
        #expect(await provider.credentialRejected(.authorization(scheme: "DPoP", "t"), response: large, context: context) == .fail)
    }

    @Test func anInvalidTokenChallengeAsksForARetry() async throws {
        #expect(try await decision(for: #"DPoP error="invalid_token", algs="ES256""#, nonce: nil) == .retry)
    }
}

@Suite struct DPoPBuildTimeRegistrationTests {
    @Test func theModeIsRegisteredByItsModuleQualifiedTypeFromTheProvidersManifest() async throws {
        // The manifest names `DPoPMode.DPoPAuthorizationMode`: a type named like its module
        // (`DPoPMode.DPoPMode`) could not be named so, and the generated registration would not compile.
        let registry = ProviderRegistry()
        registry.registerManifestProviders()
        #expect(ProviderRegistry.manifestProviderNames == ["DPoPMode.DPoP"])
        #expect(registry.modeSettingKeys.map(\.key.name) == ["dpopTokenURL", "dpopClientID", "dpopNonceRetry"])
        let configuration = try AuthorizationConfiguration(data: Data("""
            {"projectToken": "project-1", "baseURL": "https://api.example.com", "authorization": "Token api-key-1",
             "advancedAuthEnabled": true, "providerName": "DPoPMode.DPoP",
             "dpopTokenURL": "https://auth.example.com/token", "dpopClientID": "client-1"}
            """.utf8), format: .json, registry: registry)
        let transport = RecordingTransport { request in
            guard request.url == tokenURL else { return ServerResponse(statusCode: 200, body: Data("{}".utf8)) }
            return ServerResponse(statusCode: 200, body: Data(#"{"access_token":"token-m","token_type":"DPoP","expires_in":600}"#.utf8))
        }
        let client = try AuthorizedHTTPClient(configuration: configuration, policy: AuthorizationPolicy(rules: [try AuthorizationRule(host: "api.example.com", scheme: .bearer)]),
                                              registry: registry, transport: transport, diagnostics: RecordingDiagnosticsSink(), clock: ManualClock())
        _ = try await client.send(OutgoingRequest(method: "GET", url: URL(string: "https://api.example.com/x")!))
        let proof = try ReadProof(try #require(transport.requests.last?.value(forHeader: "DPoP")))
        #expect(proof.signatureIsValid && proof.ath == expectedATH("token-m"))
    }
}
