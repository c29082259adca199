import Foundation
import SDKAuthorizationTesting
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationModeKit
@testable import SDKAuthorizationIDToken
@testable import SDKAuthorizationTokenExchange


@Suite("Payload-signing and token-exchange mode", .hangLimit)
struct TokenExchangeProviderTests {
    let clock = ManualClock()
    let sink = RecordingDiagnosticsSink()
    let exchangeURL = URL(string: "https://platform.example.com/ccai/exchange")!
    let context = AuthorizationContext(endpoint: "chats", url: URL(string: "https://platform.example.com/ccai/chats")!)

    /// What the app's server would sign: iat now, exp in five minutes, plus `extra`.
    func signedPayload(_ payload: SigningPayload, extra: [String: Any] = [:]) -> String {
        var claims: [String: Any] = ["iat": clock.now().timeIntervalSince1970, "exp": clock.now().timeIntervalSince1970 + 300, "identifier": "user-7"]
        for (key, value) in payload.claims { if case .string(let text) = value { claims[key] = text } }
        for (key, value) in extra { claims[key] = value }
        return makeJWT(claims, header: ["alg": "HS256", "typ": "JWT"])
    }

    /// A platform that answers every exchange with a numbered auth token.
    func platform(lifetime: Int = 600) -> RecordingTransport {
        let issued = Counter()
        return RecordingTransport { _ in
            ServerResponse(statusCode: 200, body: Data(#"{"auth_token":"auth-token-\#(issued.increment())","token_type":"Bearer","expires_in":\#(lifetime)}"#.utf8))
        }
    }

    func provider(_ signer: PayloadSigner, transport: RecordingTransport, store: (any CredentialStore)? = nil,
                  options: TokenExchangeProvider.Options = .init()) throws -> TokenExchangeProvider {
        try TokenExchangeProvider(exchangeURL: exchangeURL, signer: signer, defaultClaims: ["push_token": .string("push-1")],
                                  identity: store == nil ? nil : "user-7",
                                  store: store, transport: transport, options: options, clock: clock, diagnostics: sink)
    }

    @Test func signedPayloadIsExchangedAndTheAuthTokenSentAsBearer() async throws {
        let transport = platform()
        let seen = Locked<[SigningPayload]>([])
        let exchange = try provider(.async { payload in
            seen.withLock { $0.append(payload) }
            return signedPayload(payload)
        }, transport: transport)
        #expect(try await exchange.credential(for: context) == .bearer("auth-token-1"))
        let payload = try #require(seen.withLock { $0 }.first)
        #expect(payload.kind == .authToken)
        #expect(payload.claims == ["push_token": .string("push-1"), "payload_type": .string("auth_token")])
        let request = try #require(transport.requests.first)
        #expect(request.method == "POST" && request.url == exchangeURL)
        let body = try #require(request.body.flatMap { try? BoundedJSONReader.parse($0) })
        guard case .object(let fields) = body, case .string(let token)? = fields["token"] else { Issue.record("no token field"); return }
        #expect(try JWTClaims(decoding: token)[claim: "push_token"] == .string("push-1"))
        // The body's bytes as the platform has always received them: one member, no white space.
        #expect(request.body == Data(#"{"token":"\#(token)"}"#.utf8))
    }

    @Test func aHundredConcurrentCallsShareOneSigningCallback() async throws {
        let calls = Counter()
        let gate = AsyncGate()
        let exchange = try provider(.async { payload in
            _ = calls.increment()
            await gate.wait()
            return signedPayload(payload)
        }, transport: platform())
        let tasks = (0..<100).map { _ in Task { [context] in try await exchange.credential(for: context) } }
        await eventually("the signer was asked", { calls.current == 1 })
        gate.open()
        for task in tasks { #expect(try await task.value == .bearer("auth-token-1")) }
        #expect(calls.current == 1)
    }

    @Test func anExpiredAuthTokenLeadsToOneNewSignAndExchange() async throws {
        let calls = Counter()
        let exchange = try provider(.async { payload in
            _ = calls.increment()
            return signedPayload(payload)
        }, transport: platform(lifetime: 600))
        #expect(try await exchange.credential(for: context) == .bearer("auth-token-1"))
        clock.advance(by: 569)                                    // 31 s left: still used (leeway 30)
        #expect(try await exchange.credential(for: context) == .bearer("auth-token-1"))
        clock.advance(by: 1)                                      // 30 s left: renewed
        #expect(try await exchange.credential(for: context) == .bearer("auth-token-2"))
        #expect(calls.current == 2)
    }

    @Test func aSecondAnswerIsIgnoredAndLogged() async throws {
        let exchange = try provider(.completion { payload, completion in
            completion(.success(signedPayload(payload)))
            completion(.failure(CancellationError()))
            completion(.success("ignored.too.x"))
        }, transport: platform())
        #expect(try await exchange.credential(for: context) == .bearer("auth-token-1"))
        #expect(sink.messages(at: .warning).filter { $0.contains("answered more than once") }.count == 2)
    }

    @Test func theVendorSamplesEmptyPhoneIsTakenAsNoPhone() async throws {
        let exchange = try provider(.async { payload in signedPayload(payload, extra: ["phone": ""]) }, transport: platform())
        #expect(try await exchange.credential(for: context) == .bearer("auth-token-1"))
    }

    @Test func theRubySamplesDigitStringIatIsTakenAsTheNumberItSpells() async throws {
        let exchange = try provider(.async { payload in
            signedPayload(payload, extra: ["iat": String(Int(clock.now().timeIntervalSince1970))])
        }, transport: platform())
        #expect(try await exchange.credential(for: context) == .bearer("auth-token-1"))
    }

    @Test(arguments: ["2023-11-14 22:13:20 +0000", "", " 1700000000", "1700000000 ", "+1700000000", "-1700000000", "1700000000.5", "1.7e9",
                      "0x6553F100", "1234567890123", "\u{FF11}\u{FF17}\u{FF10}\u{FF10}", "1700000000\u{0}", "yesterday"])
    func anIatThatIsNotANumberIsExchangedAsItIsForThePlatformToJudgeWithAWarning(iat: String) async throws {
        // The vendor's Ruby sample writes `payload["iat"] = Time.now`, a date string in JSON.
        let transport = platform()
        let exchange = try provider(.async { payload in signedPayload(payload, extra: ["iat": iat]) }, transport: transport)
        #expect(try await exchange.credential(for: context) == .bearer("auth-token-1"))
        #expect(transport.requests.count == 1, "sent to the platform, which judges it")
        #expect(sink.messages(at: .warning).filter { $0.contains("'iat' is not a number of seconds since 1970") }.count == 1)
    }

    @Test func aPayloadWithoutIatIsRefusedBeforeTheExchange() async throws {
        let transport = platform()
        let exchange = try provider(.async { payload in
            var claims: [String: Any] = ["exp": clock.now().timeIntervalSince1970 + 300, "identifier": "user-7"]
            for (key, value) in payload.claims { if case .string(let text) = value { claims[key] = text } }
            return makeJWT(claims, header: ["alg": "HS256", "typ": "JWT"])
        }, transport: transport)
        await #expect(throws: RequestError.self) { try await exchange.credential(for: context) }
        #expect(transport.requests.isEmpty)
    }

    @Test func noAnswerTimesOutOnTheClock() async throws {
        let exchange = try provider(.completion { _, _ in }, transport: platform(), options: .init(signingTimeout: 5))
        let ended = Locked(false)
        let request = Task { [context] in
            defer { ended.withLock { $0 = true } }
            return try await exchange.credential(for: context)
        }
        await clock.waitForSleepers(count: 1)
        clock.advance(by: 4.999)
        for _ in 0..<2_000 { await Task.yield() }
        #expect(!ended.withLock { $0 })
        clock.advance(by: 0.001)
        await #expect(throws: RequestError.signingTimedOut(after: 5).withEndpoint("chats")) { try await request.value }
        #expect(sink.messages(at: .warning).contains { $0.contains("did not answer within 5.0 seconds") })
    }

    @Test func aFailureAnswerFailsTheRequestWithTheSignersError() async throws {
        struct ServerDown: Error, Equatable {}
        let transport = platform()
        let exchange = try provider(.completion { _, completion in completion(.failure(ServerDown())) }, transport: transport)
        do {
            _ = try await exchange.credential(for: context)
            Issue.record("no error")
        } catch let error as RequestError {
            #expect(error.code == .signingFailed)
            #expect(error.underlyingError as? ServerDown == ServerDown())
            #expect(error.endpoint == "chats")
        }
        #expect(transport.requests.isEmpty)
    }

    @Test(arguments: ["415-555-0100", "+0123456", "+1 415 555 0100", "+1234567890123456", "+1", "0014155550100"])
    func aPhoneNumberThatIsNotE164IsExchangedForThePlatformToJudgeWithTheVendorsRecommendation(phone: String) async throws {
        let transport = platform()
        let exchange = try provider(.async { payload in signedPayload(payload, extra: ["phone": phone]) }, transport: transport)
        #expect(try await exchange.credential(for: context) == .bearer("auth-token-1"))
        #expect(transport.requests.count == 1)
        let warnings = sink.messages(at: .warning).filter { $0.contains("'phone' is not in E.164 form") }
        #expect(warnings.count == 1)
        // The user's number is not logged (the message's own example aside).
        #expect(warnings.allSatisfy { $0.contains("Google Cloud recommends using the E.164 format for phone numbers.")
            && !$0.replacingOccurrences(of: "+14155550100", with: "").contains(phone) })
    }

    @Test func aPayloadWarningIsReportedOncePerProviderNotOncePerSigning() async throws {
        let transport = platform()
        let exchange = try provider(.async { payload in signedPayload(payload, extra: ["phone": "415-555-0100", "iat": "yesterday"]) }, transport: transport)
        for _ in 0..<3 {
            _ = try await exchange.credential(for: context)
            exchange.clearUserData()   // the next request signs and exchanges again
        }
        #expect(transport.requests.count == 3)
        #expect(sink.messages(at: .warning).filter { $0.contains("'phone' is not in E.164 form") }.count == 1)
        #expect(sink.messages(at: .warning).filter { $0.contains("'iat' is not a number") }.count == 1)
    }

    @Test func anE164PhoneNumberIsAccepted() async throws {
        let exchange = try provider(.async { payload in signedPayload(payload, extra: ["phone": "+14155550100"]) }, transport: platform())
        #expect(try await exchange.credential(for: context) == .bearer("auth-token-1"))
    }

    @Test(arguments: ["not a jwt", "a.b", "missing-exp", "missing-iat", "expired"])
    func unusableSignedPayloadsAreRefusedWithTheirReason(kind: String) async throws {
        let transport = platform()
        let exchange = try provider(.async { _ in
            switch kind {
            case "missing-exp": makeJWT(["iat": clock.now().timeIntervalSince1970])
            case "missing-iat": makeJWT(["exp": clock.now().timeIntervalSince1970 + 60])
            case "expired": makeJWT(["iat": clock.now().timeIntervalSince1970 - 120, "exp": clock.now().timeIntervalSince1970 - 60])
            default: kind
            }
        }, transport: transport)
        await #expect(throws: RequestError.self) { try await exchange.credential(for: context) }
        #expect(transport.requests.isEmpty)
    }

    @Test func aRefusedExchangeFailsWithThePlatformsResponse() async throws {
        let transport = RecordingTransport(statusCode: 401, body: #"{"error":"invalid_signature"}"#)
        let exchange = try provider(.async { payload in signedPayload(payload) }, transport: transport)
        do {
            _ = try await exchange.credential(for: context)
            Issue.record("no error")
        } catch let error as RequestError {
            #expect(error.code == .exchangeFailed)
            #expect(error.statusCode == 401)
            #expect(error.body == Data(#"{"error":"invalid_signature"}"#.utf8))
        }
    }

    @Test(arguments: [#"{"expires_in":600}"#, #"{"auth_token":"a b","expires_in":600}"#, #"{"auth_token":"t","expires_in":1e300}"#,
                      #"{"auth_token":"t","expires_in":0}"#, "not json", #"{"auth_token":"t"}"#])
    func anUnusableExchangeAnswerIsATypedError(body: String) async throws {
        let exchange = try provider(.async { payload in signedPayload(payload) }, transport: RecordingTransport(statusCode: 200, body: body))
        await #expect(throws: RequestError.exchangeFailed(reason: "", response: ServerResponse(statusCode: 200, body: Data(body.utf8)), underlyingError: nil).withEndpoint("chats")) {
            try await exchange.credential(for: context)
        }
    }

    @Test func aRejectedAuthTokenIsExchangedAgainOnceThenTheRequestFails() async throws {
        let calls = Counter()
        let platform = platform()
        let exchange = try provider(.async { payload in
            _ = calls.increment()
            return signedPayload(payload)
        }, transport: platform)
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(host: "platform.example.com", path: "/ccai/chats", scheme: .bearer))
        let api = RecordingTransport(statusCode: 401)
        let client = AuthorizedHTTPClient(authorizer: try RequestAuthorizer(policy: policy, providers: [.bearer: exchange], clock: clock, diagnostics: sink), transport: api)
        await #expect(throws: RequestError.self) { try await client.send(OutgoingRequest(method: "GET", url: context.url)) }
        #expect(api.requests.map { $0.value(forHeader: "Authorization") } == ["Bearer auth-token-1", "Bearer auth-token-2"])
        #expect(calls.current == 2)
    }

    @Test func clearUserDataForgetsTheTokenAndItsStoredCopy() async throws {
        let store = MemoryCredentialStore()
        let calls = Counter()
        let exchange = try provider(.async { payload in
            _ = calls.increment()
            return signedPayload(payload)
        }, transport: platform(), store: store)
        _ = try await exchange.credential(for: context)
        #expect(try store.load(identity: "user-7", kind: .exchangeAtPlatform)?.token == "auth-token-1")
        exchange.clearUserData()
        #expect(exchange.currentToken == nil)
        #expect(try store.load(identity: "user-7", kind: .exchangeAtPlatform) == nil)
        #expect(try await exchange.credential(for: context) == .bearer("auth-token-2"))
        #expect(calls.current == 2)
    }

    @Test func aStoredAuthTokenServesAColdStartWithoutSigning() async throws {
        let store = MemoryCredentialStore()
        try store.save(StoredCredential(token: "stored-auth-token", expiresAt: clock.now().addingTimeInterval(600)), identity: "user-7", kind: .exchangeAtPlatform)
        let calls = Counter()
        let exchange = try provider(.async { payload in
            _ = calls.increment()
            return signedPayload(payload)
        }, transport: platform(), store: store)
        #expect(try await exchange.credential(for: context) == .bearer("stored-auth-token"))
        #expect(calls.current == 0)
    }

    @Test func badOptionsAndURLsAreRefused() {
        let signer = PayloadSigner.async { _ in "" }
        #expect(throws: ConfigurationError.self) { try TokenExchangeProvider(exchangeURL: URL(string: "ftp://x.example/e")!, signer: signer) }
        #expect(throws: ConfigurationError.self) { try TokenExchangeProvider(exchangeURL: exchangeURL, signer: signer, identity: "") }
        for options in [TokenExchangeProvider.Options(signingTimeout: 0), .init(signingTimeout: 601), .init(signingTimeout: .nan), .init(expiryLeeway: -1), .init(expiryLeeway: 3601),
                        .init(exchangeTimeout: 0), .init(exchangeTimeout: 601), .init(exchangeTimeout: .infinity)] {
            #expect(throws: ConfigurationError.self) { try TokenExchangeProvider(exchangeURL: exchangeURL, signer: signer, options: options) }
        }
    }

    // MARK: Hardening

    /// The exchange's error, or an issue when it succeeded.
    func exchangeError(_ exchange: TokenExchangeProvider) async -> RequestError? {
        do {
            let credential = try await exchange.credential(for: context)
            Issue.record("the exchange succeeded with \(credential)")
            return nil
        } catch let error as RequestError {
            return error
        } catch {
            Issue.record("not a RequestError: \(error)")
            return nil
        }
    }

    @Test func anOversizedAuthTokenIsRefusedAndNeitherSentNorStored() async throws {
        let store = MemoryCredentialStore()
        // Too long a token, in an answer under the size limit.
        let huge = String(repeating: "a", count: 20_000)
        let platform = RecordingTransport { _ in ServerResponse(statusCode: 200, body: Data(#"{"auth_token":"\#(huge)","expires_in":600}"#.utf8)) }
        let exchange = try provider(.async { payload in signedPayload(payload) }, transport: platform, store: store)
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(host: "platform.example.com", path: "/ccai/chats", scheme: .bearer))
        let api = RecordingTransport(statusCode: 200)
        let client = AuthorizedHTTPClient(authorizer: try RequestAuthorizer(policy: policy, providers: [.bearer: exchange], clock: clock, diagnostics: sink), transport: api)
        do {
            _ = try await client.send(OutgoingRequest(method: "GET", url: context.url))
            Issue.record("a 20 KB auth token was used")
        } catch {
            #expect(error.code == .exchangeFailed)
            #expect(error.description.contains("longer than 8192 bytes"))
        }
        #expect(api.requests.isEmpty)
        #expect(try store.load(identity: "user-7", kind: .exchangeAtPlatform) == nil)
        #expect(exchange.currentToken?.utf8.count == nil)
    }

    @Test func anAuthTokenOfEightKibibytesIsAccepted() async throws {
        let token = String(repeating: "a", count: 8_192)
        let platform = RecordingTransport { _ in ServerResponse(statusCode: 200, body: Data(#"{"auth_token":"\#(token)","expires_in":600}"#.utf8)) }
        let exchange = try provider(.async { payload in signedPayload(payload) }, transport: platform)
        #expect(try await exchange.credential(for: context) == .bearer(token))
    }

    @Test(arguments: [1, 29, 30])
    func anExpiresInNotLongerThanTheLeewayIsRefused(lifetime: Int) async throws {
        let store = MemoryCredentialStore()
        let exchange = try provider(.async { payload in signedPayload(payload) }, transport: platform(lifetime: lifetime), store: store,
                                    options: .init(expiryLeeway: 30))
        let error = await exchangeError(exchange)
        #expect(error?.code == .exchangeFailed)
        #expect(error?.description.contains("not longer than the expiry leeway (30") == true)
        #expect(try store.load(identity: "user-7", kind: .exchangeAtPlatform) == nil)
    }

    @Test func anExpiresInJustOverTheLeewayIsUsed() async throws {
        let calls = Counter()
        let exchange = try provider(.async { payload in
            _ = calls.increment()
            return signedPayload(payload)
        }, transport: platform(lifetime: 31), options: .init(expiryLeeway: 30))
        #expect(try await exchange.credential(for: context) == .bearer("auth-token-1"))
        #expect(try await exchange.credential(for: context) == .bearer("auth-token-1"))
        #expect(calls.current == 1)
    }

    @Test(arguments: ["http://platform.example.com/ccai/exchange", "http://128.0.0.1/e", "http://127.0.0.1.example.com/e",
                      "http://localhost.example.com/e", "http://[::2]/e", "http://10.0.0.1:8080/e", "http://127.1/e"])
    func aPlainHTTPExchangeURLOnAPublicHostIsRefused(url: String) throws {
        do {
            _ = try TokenExchangeProvider(exchangeURL: try #require(URL(string: url)), signer: .async { _ in "" })
            Issue.record("accepted \(url)")
        } catch let error as ConfigurationError {
            #expect(error.code == .invalidValue, "unexpected \(error)")
            #expect(error.key == "exchangeURL")
            #expect(error.reason?.contains("https") == true)
        }
    }

    @Test(arguments: ["http://127.0.0.1:8080/exchange", "http://127.10.20.30/e", "http://localhost:9000/e", "http://LocalHost/e",
                      "http://[::1]:8080/e", "https://platform.example.com/e"])
    func aPlainHTTPExchangeURLOnALoopbackHostOrHTTPSIsAccepted(url: String) throws {
        _ = try TokenExchangeProvider(exchangeURL: try #require(URL(string: url)), signer: .async { _ in "" })
    }

    @Test func thePlatformsErrorTextIsCutAndEscapedInTheMessage() async throws {
        let hostile = "\u{202E}evil\nforged log line " + String(repeating: "x", count: 500)
        let body = try JSONSerialization.data(withJSONObject: ["error": hostile])
        let exchange = try provider(.async { payload in signedPayload(payload) }, transport: RecordingTransport { _ in ServerResponse(statusCode: 400, body: body) })
        let error = try #require(await exchangeError(exchange))
        let message = error.description
        #expect(message.contains("\\u{202e}evil\\u{a}forged log line xxx"))
        #expect(!message.contains("\u{202E}") && !message.contains("\n"))
        #expect(!message.contains(String(repeating: "x", count: 201)))
        #expect(message.contains("…"))
    }
}

@Suite("Credential stores", .hangLimit)
struct CredentialStoreTests {
    func temporaryStore() -> (FileCredentialStore, URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sdkauth-store-\(UUID().uuidString)", isDirectory: true)
        return (FileCredentialStore(namespace: .testing, directory: directory), directory)
    }

    @Test func fileStoreKeepsOneOwnerOnlyFilePerIdentityAndLeavesNoTemporaryFiles() throws {
        let (store, directory) = temporaryStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let credential = StoredCredential(token: "auth-token-secret", expiresAt: Date(timeIntervalSince1970: 1_900_000_000))
        try store.save(credential, identity: "user-7")
        try store.save(StoredCredential(token: "second", expiresAt: nil), identity: "user-8")
        #expect(try store.load(identity: "user-7") == credential)
        #expect(try store.load(identity: "nobody") == nil)
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(files.count == 2)
        #expect(!files.contains { $0.hasSuffix(".tmp") })
        for file in files {
            let permissions = try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent(file).path)[.posixPermissions] as? Int
            #expect(permissions == 0o600)
        }
        #expect(try FileManager.default.attributesOfItem(atPath: directory.path)[.posixPermissions] as? Int == 0o700)
        try store.remove(identity: "user-7")
        try store.remove(identity: "user-7")
        #expect(try store.load(identity: "user-7") == nil)
    }

    @Test func aCorruptOrForeignFileIsNotTakenForACredential() throws {
        let (store, directory) = temporaryStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        try store.save(StoredCredential(token: "t", expiresAt: nil), identity: "a")
        let file = try #require(try FileManager.default.contentsOfDirectory(atPath: directory.path).first)
        try Data("{\"identity\":".utf8).write(to: directory.appendingPathComponent(file))
        #expect(throws: CredentialStoreError.self) { try store.load(identity: "a") }
    }

    @Test(arguments: ["", String(repeating: "x", count: 101)])
    func identitiesOutOfRangeAreRefused(identity: String) {
        let (store, _) = temporaryStore()
        #expect(throws: CredentialStoreError.self) { try store.save(StoredCredential(token: "t", expiresAt: nil), identity: identity) }
    }

    @Test func idTokenStoreKeepsItsTokenInAnOptInStoreForTheNextLaunch() async throws {
        let store = MemoryCredentialStore()
        let first = try IDTokenStore(authorizedDomains: ["api.example.com"], diagnostics: RecordingDiagnosticsSink(), credentialStore: store, credentialIdentity: "user-7")
        try first.setIDToken("persisted-id-token")
        let coldStart = try IDTokenStore(authorizedDomains: ["api.example.com"], diagnostics: RecordingDiagnosticsSink(), credentialStore: store, credentialIdentity: "user-7")
        let context = AuthorizationContext(endpoint: nil, url: URL(string: "https://api.example.com/x")!)
        #expect(try await coldStart.credential(for: context) == .bearer("persisted-id-token"))
        coldStart.clearIDToken()
        #expect(try store.load(identity: "user-7", kind: .idTokenOfAPI) == nil)
    }
}
