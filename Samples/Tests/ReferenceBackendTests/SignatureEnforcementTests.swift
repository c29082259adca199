import Foundation
import Hummingbird
import HummingbirdTesting
@testable import ReferenceBackend
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// MARK: Helpers

/// An answer of the signature role, with its body read as a JSON object.
struct SignatureAnswer {
    var status: Int
    var raw: String
    var object: [String: Any]

    var authError: [String: Any]? { object["auth_error"] as? [String: Any] }
    var errorCode: Int? { authError?["error_code"] as? Int }
    var reason: String? { authError?["reason"] as? String }
    var requestId: String? { object["request_id"] as? String }
}

/// A data body as the SDK sends it.
func dataBody(userId: String? = "u1", requestId: String = "request-1", events: [[String: String]] = [["name": "opened"]]) -> String {
    var object: [String: Any] = ["request_id": requestId, "events": events]
    if let userId { object["user_id"] = userId }
    let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
    return String(decoding: data, as: UTF8.self)
}

/// `POST /braze/apps/<appId>/data` over real HTTP, with the signature header when given.
func postData(
    _ backend: ReferenceBackend,
    app: String = "reference-app",
    signature: String?,
    body: String = dataBody()
) async throws -> SignatureAnswer {
    try await postData(backend, app: app, signature: signature, body: Data(body.utf8))
}

func postData(_ backend: ReferenceBackend, app: String = "reference-app", signature: String?, body: Data) async throws -> SignatureAnswer {
    let url = try #require(URL(string: backend.baseURL.absoluteString + "/braze/apps/\(app)/data"))
    var request = URLRequest(url: url)
    request.httpMethod = "POST"
    request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    if let signature { request.setValue(signature, forHTTPHeaderField: ReferenceBackend.signatureHeaderName) }
    request.httpBody = body
    let (data, response) = try await URLSession.shared.data(for: request)
    let http = try #require(response as? HTTPURLResponse)
    let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
    return SignatureAnswer(status: http.statusCode, raw: String(decoding: data, as: UTF8.self), object: object)
}

/// Expects exactly `401 {"auth_error": {"error_code": code, "reason": "..."}, "user_id": userId}`.
func expectRejected(
    _ answer: SignatureAnswer,
    _ code: ReferenceBackend.SignatureErrorCode,
    userId: String = "u1",
    sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(answer.status == 401, "answer was \(answer.raw)", sourceLocation: sourceLocation)
    #expect(Set(answer.object.keys) == ["auth_error", "user_id"], "answer was \(answer.raw)", sourceLocation: sourceLocation)
    #expect(answer.object["user_id"] as? String == userId, sourceLocation: sourceLocation)
    #expect(Set(answer.authError?.keys.map { $0 } ?? []) == ["error_code", "reason"], "answer was \(answer.raw)", sourceLocation: sourceLocation)
    #expect(answer.errorCode == code.rawValue, "expected \(code.rawValue) \(code.name), answer was \(answer.raw)", sourceLocation: sourceLocation)
    #expect(answer.reason?.isEmpty == false, sourceLocation: sourceLocation)
}

/// Expects `201 {"request_id": requestId, "success": true}` and nothing else.
func expectAccepted(_ answer: SignatureAnswer, requestId: String = "request-1", sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(answer.status == 201, "answer was \(answer.raw)", sourceLocation: sourceLocation)
    #expect(answer.raw == #"{"request_id":"\#(requestId)","success":true}"#, sourceLocation: sourceLocation)
}

/// A backend with the app `reference-app` (Required, set explicitly: the default is Disabled; the
/// app server's keys) and the apps given.
func signatureConfiguration(
    _ apps: [ReferenceBackend.SignatureApp] = [],
    now: @escaping @Sendable () -> Date = { Date() }
) -> ReferenceBackend.Configuration {
    ReferenceBackend.Configuration(
        apiKeys: [testAPIKey], projectToken: testProjectToken,
        signatureApps: [ReferenceBackend.SignatureApp(id: "reference-app", enforcement: .required)] + apps, now: now
    )
}

/// Expects `start` to refuse the configuration with `invalidConfiguration`; returns the message.
@discardableResult
func expectRefusedToStart(_ configuration: ReferenceBackend.Configuration, sourceLocation: SourceLocation = #_sourceLocation) async -> String? {
    do {
        let backend = try await ReferenceBackend.start(configuration)
        await backend.stop()
        Issue.record("the backend started", sourceLocation: sourceLocation)
    } catch ReferenceBackend.StartError.invalidConfiguration(let problem) {
        #expect(!problem.isEmpty, sourceLocation: sourceLocation)
        return problem
    } catch {
        Issue.record("unexpected error \(error)", sourceLocation: sourceLocation)
    }
    return nil
}

func jsonData(_ object: [String: Any]) -> Data {
    (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
}

// MARK: Tests

@Suite("Reference backend Braze-style SDK signatures", .timeLimit(.minutes(3)))
struct SignatureEnforcementTests {
    // MARK: Accepted

    @Test("A valid signature from the app server is accepted with 201 and the request_id")
    func aValidSignatureIsAccepted() async throws {
        try await withBackend(signatureConfiguration()) { backend in
            #expect(backend.signatureEnforcement(appId: "reference-app") == .required)
            let signature = try backend.issueSignature(userId: "u1")
            let answer = try await postData(backend, signature: signature, body: dataBody(events: [["name": "opened", "user_id": "u1"]]))
            expectAccepted(answer)
            // Over HTTP, as an app would fetch it from its server.
            let minted = try await send(backend, "/app/braze-signature", body: #"{"userId":"u1","variant":"valid","lifetimeSeconds":60}"#)
            #expect(minted.status == 200, "answer was \(minted.raw)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(minted.raw.utf8)) as? [String: String])
            #expect(Set(object.keys) == ["signature"])
            let fetched: String = try #require(object["signature"])
            expectAccepted(try await postData(backend, signature: fetched, body: dataBody(requestId: "request-2")), requestId: "request-2")
            #expect(backend.signatureErrorReport(appId: "reference-app").isEmpty)
        }
    }

    @Test("A minted signature is RS256 with the signing key's kid, sub, exp from Configuration.now, and aud braze")
    func aMintedSignatureHasTheBrazeShape() async throws {
        let later = Date().addingTimeInterval(7_200)
        try await withBackend(signatureConfiguration(now: { later })) { backend in
            let signature = try backend.issueSignature(userId: "u1", lifetime: 60, issuer: "key-1")
            let parts = signature.split(separator: ".").map(String.init)
            try #require(parts.count == 3)
            let header = try #require(Base64URL.decode(parts[0]).flatMap { JSONValue.object(from: $0) })
            let claims = try #require(Base64URL.decode(parts[1]).flatMap { JSONValue.object(from: $0) })
            #expect(header["alg"] == .string("RS256"))
            #expect(header["kid"] == .string(try #require(backend.trustedKeyIDs.last)))
            #expect(claims["sub"] == .string("u1"))
            #expect(claims["aud"] == .string("braze"))
            #expect(claims["iss"] == .string("key-1"))
            let exp = try #require(claims["exp"]?.numberValue)
            #expect(abs(exp - later.timeIntervalSince1970 - 60) < 2)
            // Two hours ahead of the real clock, the backend still accepts it: expiry uses Configuration.now.
            expectAccepted(try await postData(backend, signature: signature))
        }
    }

    // MARK: Each error code under Required

    enum BadCase: String, CaseIterable, CustomTestStringConvertible {
        case noHeader, emptyHeader, notAJWT, payloadNotJSON, signaturePartNotBase64URL
        case hs256, noPublicKeys, untrustedKey, signedByAnotherBackend, missingExp, expExpiredAt
        case subMissing, subNotAString, audienceNotBraze, issuerNotTheAPIKey
        case otherSubject, eventOfAnotherUser

        var testDescription: String { rawValue }

        var expected: ReferenceBackend.SignatureErrorCode {
            switch self {
            case .noHeader, .emptyHeader: .missingToken
            case .notAJWT, .payloadNotJSON, .signaturePartNotBase64URL: .decodingError
            case .hs256: .incorrectAlgorithm
            case .noPublicKeys: .publicKeyError
            case .untrustedKey, .signedByAnotherBackend: .noMatchingPublicKeys
            case .missingExp: .expirationRequired
            case .expExpiredAt: .expired
            case .subMissing, .subNotAString, .audienceNotBraze, .issuerNotTheAPIKey: .invalidPayload
            case .otherSubject: .subjectMismatch
            case .eventOfAnotherUser: .payloadUserIdMismatch
            }
        }
    }

    @Test("Under Required each bad signature or body is refused with 401 and exactly its Braze error code", arguments: BadCase.allCases)
    func eachFailureIsRefusedWithItsCode(_ bad: BadCase) async throws {
        let pair = try ReferenceBackend.SignatureKeyPair()
        let apps = [
            ReferenceBackend.SignatureApp(id: "with-api-key", enforcement: .required, apiKey: "braze-api-key"),
            ReferenceBackend.SignatureApp(id: "no-keys", enforcement: .required, publicKeysPEM: []),
            ReferenceBackend.SignatureApp(id: "own-keys", enforcement: .required, publicKeysPEM: [pair.publicKeyPEM]),
        ]
        let foreign = try await withBackend { try $0.issueSignature(userId: "u1") }
        try await withBackend(signatureConfiguration(apps)) { backend in
            let now = Int(Date().timeIntervalSince1970)
            let (app, signature, body): (String, String?, String) =
                switch bad {
                case .noHeader: ("reference-app", nil, dataBody())
                case .emptyHeader: ("reference-app", "", dataBody())
                case .notAJWT: ("reference-app", "not-a-jwt", dataBody())
                case .payloadNotJSON: ("reference-app", base64URL(#"{"alg":"RS256"}"#) + "." + base64URL("not json") + ".c2ln", dataBody())
                case .signaturePartNotBase64URL: ("reference-app", try backend.issueSignature(userId: "u1") + "!", dataBody())
                case .hs256: ("reference-app", try backend.issueSignature(userId: "u1", variant: .wrongAlgorithm), dataBody())
                case .noPublicKeys: ("no-keys", try backend.issueSignature(userId: "u1"), dataBody())
                case .untrustedKey: ("reference-app", try backend.issueSignature(userId: "u1", variant: .wrongKey), dataBody())
                case .signedByAnotherBackend: ("reference-app", foreign, dataBody())
                case .missingExp: ("reference-app", try backend.issueSignature(userId: "u1", variant: .missingExp), dataBody())
                case .expExpiredAt: ("reference-app", try backend.issueSignature(userId: "u1", variant: .expired), dataBody())
                case .subMissing: ("own-keys", try pair.sign(payloadJSON: jsonData(["exp": now + 60, "aud": "braze"])), dataBody())
                case .subNotAString: ("own-keys", try pair.sign(payloadJSON: jsonData(["sub": 1, "exp": now + 60])), dataBody())
                case .audienceNotBraze: ("reference-app", try backend.issueSignature(userId: "u1", audience: "not-braze"), dataBody())
                case .issuerNotTheAPIKey: ("with-api-key", try backend.issueSignature(userId: "u1", issuer: "another-key"), dataBody())
                case .otherSubject: ("reference-app", try backend.issueSignature(userId: "u1", variant: .otherSubject), dataBody())
                case .eventOfAnotherUser:
                    ("reference-app", try backend.issueSignature(userId: "u1"), dataBody(events: [["name": "a", "user_id": "u1"], ["name": "b", "user_id": "u2"]]))
                }
            let answer: SignatureAnswer
            if bad == .emptyHeader {
                // URLSession may drop a header with an empty value: send it byte for byte.
                let response = try await TestClient.withClient(host: "127.0.0.1", port: backend.port) { client in
                    try await client.post(
                        "/braze/apps/\(app)/data",
                        headers: [.init(ReferenceBackend.signatureHeaderName)!: "", .contentType: "application/json"],
                        body: ByteBuffer(string: body)
                    )
                }
                let raw = response.body.map { String(buffer: $0) } ?? ""
                let object = (try? JSONSerialization.jsonObject(with: Data(raw.utf8))) as? [String: Any] ?? [:]
                answer = SignatureAnswer(status: Int(response.status.code), raw: raw, object: object)
            } else {
                answer = try await postData(backend, app: app, signature: signature, body: body)
            }
            expectRejected(answer, bad.expected)
            if let signature, !signature.isEmpty {
                #expect(answer.reason?.contains(signature) == false)
            }
            #expect(backend.signatureErrorReport(appId: app) == [bad.expected.rawValue: 1])
            #expect(backend.signatureDeliveries().isEmpty)
        }
    }

    @Test("The checks run in Braze's order: an expired HS256 signature is 24, an expired one for another user is 22")
    func checksRunInOrder() async throws {
        #expect(ReferenceBackend.SignatureErrorCode.allCases.map(\.rawValue) == [10, 20, 21, 22, 23, 24, 25, 26, 27, 28])
        #expect(ReferenceBackend.SignatureErrorCode.payloadUserIdMismatch.name == "PAYLOAD_USER_ID_MISMATCH")
        try await withBackend(signatureConfiguration()) { backend in
            let pair = try ReferenceBackend.SignatureKeyPair()
            let past = Int(Date().timeIntervalSince1970) - 60
            // alg before the key, the key before exp, exp before sub, sub before the events.
            let hs256Expired = base64URL(#"{"alg":"HS256","typ":"JWT"}"#) + "." + base64URL(#"{"sub":"u2","exp":\#(past)}"#) + ".c2ln"
            expectRejected(try await postData(backend, signature: hs256Expired), .incorrectAlgorithm)
            let untrustedExpired = try pair.sign(payloadJSON: jsonData(["sub": "u2", "exp": past]))
            expectRejected(try await postData(backend, signature: untrustedExpired), .noMatchingPublicKeys)
            let expiredOtherUser = try backend.issueSignature(userId: "u2", variant: .expired)
            expectRejected(try await postData(backend, signature: expiredOtherUser), .expired)
            let otherUser = try backend.issueSignature(userId: "u2")
            let body = dataBody(events: [["name": "x", "user_id": "u3"]])
            expectRejected(try await postData(backend, signature: otherUser, body: body), .subjectMismatch)
        }
    }

    // MARK: Enforcement states

    @Test("Under Optional a failing signature is reported in auth_error with optional true and the request accepted")
    func optionalReportsAndAccepts() async throws {
        let apps = [ReferenceBackend.SignatureApp(id: "optional-app", enforcement: .optional)]
        try await withBackend(signatureConfiguration(apps)) { backend in
            let expired = try backend.issueSignature(userId: "u1", variant: .expired)
            let answer = try await postData(backend, app: "optional-app", signature: expired)
            #expect(answer.status == 201, "answer was \(answer.raw)")
            #expect(Set(answer.object.keys) == ["success", "request_id", "user_id", "auth_error"])
            #expect(answer.object["success"] as? Bool == true)
            #expect(answer.requestId == "request-1")
            #expect(answer.object["user_id"] as? String == "u1")
            #expect(Set(answer.authError?.keys.map { $0 } ?? []) == ["error_code", "reason", "optional"])
            #expect(answer.errorCode == 22)
            #expect(answer.authError?["optional"] as? Bool == true)
            #expect(answer.reason?.contains(expired) == false)
            // No signature at all is reported too, and a valid one is accepted without auth_error.
            let missing = try await postData(backend, app: "optional-app", signature: nil, body: dataBody(requestId: "request-2"))
            #expect(missing.status == 201)
            #expect(missing.errorCode == 26)
            expectAccepted(
                try await postData(backend, app: "optional-app", signature: try backend.issueSignature(userId: "u1"), body: dataBody(requestId: "request-3")),
                requestId: "request-3"
            )
            #expect(backend.signatureDeliveries() == ["request-1": 1, "request-2": 1, "request-3": 1])
            #expect(backend.signatureErrorReport(appId: "optional-app") == [22: 1, 26: 1])
        }
    }

    @Test("Under Disabled an expired signature, or none, is accepted with no auth_error and nothing is reported")
    func disabledAcceptsWithoutChecking() async throws {
        let apps = [ReferenceBackend.SignatureApp(id: "disabled-app", enforcement: .disabled)]
        try await withBackend(signatureConfiguration(apps)) { backend in
            let expired = try backend.issueSignature(userId: "u1", variant: .expired)
            expectAccepted(try await postData(backend, app: "disabled-app", signature: expired))
            expectAccepted(try await postData(backend, app: "disabled-app", signature: nil, body: dataBody(requestId: "request-2")), requestId: "request-2")
            #expect(backend.signatureErrorReport(appId: "disabled-app").isEmpty)
            // The body is still read: a body without request_id is refused.
            expectFailure(try await send(backend, "/braze/apps/disabled-app/data", body: #"{"user_id":"u1"}"#), status: 400, code: .invalidRequest)
        }
    }

    @Test("An anonymous body (no user_id) is accepted under Required without a signature, or with a bad one")
    func anonymousRequestsAreNotChecked() async throws {
        try await withBackend(signatureConfiguration()) { backend in
            expectAccepted(try await postData(backend, signature: nil, body: dataBody(userId: nil)))
            expectAccepted(try await postData(backend, signature: "garbage", body: dataBody(userId: nil, requestId: "request-2")), requestId: "request-2")
            expectAccepted(try await postData(backend, signature: nil, body: #"{"request_id":"request-3","user_id":null}"#), requestId: "request-3")
            #expect(backend.signatureErrorReport(appId: "reference-app").isEmpty)
        }
    }

    // MARK: Public keys

    @Test("An app's explicit public keys verify signatures of their private keys, with or without a kid, and no other key")
    func explicitPublicKeysVerifyMatchingPrivateKeys() async throws {
        let first = try ReferenceBackend.SignatureKeyPair()
        let second = try ReferenceBackend.SignatureKeyPair()
        let stranger = try ReferenceBackend.SignatureKeyPair()
        #expect(!String(describing: first).contains("PRIVATE"))
        let apps = [ReferenceBackend.SignatureApp(id: "own-keys", enforcement: .required, apiKey: "braze-api-key", publicKeysPEM: [first.publicKeyPEM, second.publicKeyPEM])]
        try await withBackend(signatureConfiguration(apps)) { backend in
            expectAccepted(try await postData(backend, app: "own-keys", signature: try first.signature(userId: "u1")))
            let withKid = try second.signature(userId: "u1", issuer: "braze-api-key", kid: "second-key")
            expectAccepted(try await postData(backend, app: "own-keys", signature: withKid, body: dataBody(requestId: "request-2")), requestId: "request-2")
            let noAudience = try second.signature(userId: "u1", audience: nil, kid: "rb-key-1")
            expectAccepted(try await postData(backend, app: "own-keys", signature: noAudience, body: dataBody(requestId: "request-3")), requestId: "request-3")
            expectRejected(try await postData(backend, app: "own-keys", signature: try stranger.signature(userId: "u1")), .noMatchingPublicKeys)
            // The backend's own signatures are not trusted by an app with its own keys, and the reverse.
            expectRejected(try await postData(backend, app: "own-keys", signature: try backend.issueSignature(userId: "u1")), .noMatchingPublicKeys)
            expectRejected(try await postData(backend, signature: try first.signature(userId: "u1")), .noMatchingPublicKeys)
            // A validly signed signature expired by the key pair's own clock.
            let expired = try first.signature(userId: "u1", lifetime: 60, now: Date().addingTimeInterval(-120))
            expectRejected(try await postData(backend, app: "own-keys", signature: expired), .expired)
        }
    }

    @Test("Three explicit public keys start; a fourth key, or a PEM that does not parse, refuses to start")
    func publicKeyListsAreBounded() async throws {
        let pairs = try (0..<4).map { _ in try ReferenceBackend.SignatureKeyPair() }
        let three = signatureConfiguration([ReferenceBackend.SignatureApp(id: "three", publicKeysPEM: pairs.prefix(3).map(\.publicKeyPEM))])
        try await withBackend(three) { backend in
            expectAccepted(try await postData(backend, app: "three", signature: try pairs[2].signature(userId: "u1")))
        }
        let four = await expectRefusedToStart(signatureConfiguration([ReferenceBackend.SignatureApp(id: "four", publicKeysPEM: pairs.map(\.publicKeyPEM))]))
        #expect(four?.contains("at most 3") == true, "\(four ?? "")")
        for pem in ["not a pem", "", "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"] {
            let problem = await expectRefusedToStart(signatureConfiguration([ReferenceBackend.SignatureApp(id: "bad-pem", publicKeysPEM: [pairs[0].publicKeyPEM, pem])]))
            #expect(problem?.contains("publicKeysPEM[1]") == true, "\(problem ?? "")")
        }
    }

    @Test("App ids must be unique and 1...64 letters, digits, '-' or '_'; an API key must not be empty")
    func appIdsAreChecked() async throws {
        for id in ["", "has space", "slash/es", "ünïcode", String(repeating: "a", count: 65)] {
            await expectRefusedToStart(signatureConfiguration([ReferenceBackend.SignatureApp(id: id)]))
        }
        let problem = await expectRefusedToStart(signatureConfiguration([ReferenceBackend.SignatureApp(id: "reference-app")]))
        #expect(problem?.contains("twice") == true)
        await expectRefusedToStart(signatureConfiguration([ReferenceBackend.SignatureApp(id: "empty-key", apiKey: "")]))
        try await withBackend(signatureConfiguration([ReferenceBackend.SignatureApp(id: String(repeating: "A-_9", count: 16))])) { backend in
            #expect(backend.signatureEnforcement(appId: String(repeating: "A-_9", count: 16)) == .disabled, "the default")
        }
        try await withBackend(ReferenceBackend.Configuration(apiKeys: [testAPIKey], projectToken: testProjectToken, signatureApps: [])) { backend in
            expectFailure(try await send(backend, "/braze/apps/reference-app/data", body: dataBody()), status: 404, code: .unknownApp)
        }
    }

    @Test("The app server's keys follow rotation: a signature verifies until its key is the fourth newest")
    func appServerKeysFollowRotation() async throws {
        try await withBackend(signatureConfiguration()) { backend in
            let old = try backend.issueSignature(userId: "u1")
            for rotation in 1...2 {
                try await backend.rotateSigningKey()
                expectAccepted(try await postData(backend, signature: old, body: dataBody(requestId: "r\(rotation)")), requestId: "r\(rotation)")
            }
            try await backend.rotateSigningKey()
            #expect(backend.trustedKeyIDs.count == 3)
            expectRejected(try await postData(backend, signature: old), .noMatchingPublicKeys)
            expectAccepted(try await postData(backend, signature: try backend.issueSignature(userId: "u1"), body: dataBody(requestId: "r4")), requestId: "r4")
        }
    }

    // MARK: Runtime enforcement

    @Test("An app configured without an enforcement is Disabled, Braze's default: an unsigned or expired request is accepted")
    func enforcementDefaultsToDisabled() async throws {
        #expect(ReferenceBackend.SignatureApp(id: "any").enforcement == .disabled)
        let configuration = ReferenceBackend.Configuration(apiKeys: [testAPIKey], projectToken: testProjectToken)
        try await withBackend(configuration) { backend in
            #expect(backend.signatureEnforcement(appId: "reference-app") == .disabled)
            expectAccepted(try await postData(backend, signature: nil))
            let expired = try backend.issueSignature(userId: "u1", variant: .expired)
            expectAccepted(try await postData(backend, signature: expired, body: dataBody(requestId: "request-2")), requestId: "request-2")
            #expect(backend.signatureErrorReport(appId: "reference-app").isEmpty, "nothing checked, nothing reported")
        }
    }

    @Test("setSignatureEnforcement switches an app at once; an unknown app throws")
    func enforcementSwitchedByAPI() async throws {
        try await withBackend(signatureConfiguration()) { backend in
            let expired = try backend.issueSignature(userId: "u1", variant: .expired)
            expectRejected(try await postData(backend, signature: expired), .expired)
            try backend.setSignatureEnforcement(.optional, appId: "reference-app")
            #expect(backend.signatureEnforcement(appId: "reference-app") == .optional)
            let optional = try await postData(backend, signature: expired, body: dataBody(requestId: "request-2"))
            #expect(optional.status == 201)
            #expect(optional.authError?["optional"] as? Bool == true)
            try backend.setSignatureEnforcement(.disabled, appId: "reference-app")
            expectAccepted(try await postData(backend, signature: expired, body: dataBody(requestId: "request-3")), requestId: "request-3")
            try backend.setSignatureEnforcement(.required, appId: "reference-app")
            expectRejected(try await postData(backend, signature: expired), .expired)
            #expect(throws: ReferenceBackend.UnknownSignatureAppError(appId: "nope")) {
                try backend.setSignatureEnforcement(.disabled, appId: "nope")
            }
            #expect(backend.signatureEnforcement(appId: "nope") == nil)
            #expect(backend.signatureErrorReport(appId: "reference-app") == [22: 3])
        }
    }

    @Test("PUT /__braze/apps/<appId>/enforcement switches an app; a bad value is 400, an unknown app 404 unknown_app")
    func enforcementSwitchedByTestRoute() async throws {
        try await withBackend(signatureConfiguration()) { backend in
            let put = try await send(backend, "/__braze/apps/reference-app/enforcement", method: "PUT", body: #"{"enforcement":"optional"}"#)
            #expect(put.status == 200, "answer was \(put.raw)")
            #expect(put.raw == #"{"app_id":"reference-app","enforcement":"optional","success":true}"#)
            #expect(backend.signatureEnforcement(appId: "reference-app") == .optional)
            let answer = try await postData(backend, signature: nil)
            #expect(answer.status == 201)
            #expect(answer.errorCode == 26)

            for bad in [#"{"enforcement":"sometimes"}"#, #"{"enforcement":"Required"}"#, #"{"enforcement":1}"#, "{}", "[]", "not json"] {
                expectFailure(try await send(backend, "/__braze/apps/reference-app/enforcement", method: "PUT", body: bad), status: 400, code: .invalidRequest)
            }
            #expect(backend.signatureEnforcement(appId: "reference-app") == .optional)
            expectFailure(
                try await send(backend, "/__braze/apps/nope/enforcement", method: "PUT", body: #"{"enforcement":"disabled"}"#),
                status: 404, code: .unknownApp
            )
            let disable = try await send(backend, "/__braze/apps/reference-app/enforcement", method: "PUT", body: #"{"enforcement":"disabled"}"#)
            #expect(disable.status == 200)
            expectAccepted(try await postData(backend, signature: "garbage", body: dataBody(requestId: "request-2")), requestId: "request-2")
            // Test routes are not vendor routes: only the two data requests were recorded.
            #expect(await backend.records().map(\.path) == ["/braze/apps/reference-app/data", "/braze/apps/reference-app/data"])
        }
    }

    @Test("Bound to 0.0.0.0, PUT /__braze/.../enforcement and POST /app/braze-signature answer 404 like an unknown route")
    func signatureTestRoutesAnswer404WhenClosed() async throws {
        let configuration = ReferenceBackend.Configuration(host: "0.0.0.0", apiKeys: [testAPIKey], projectToken: testProjectToken)
        try await withBackend(configuration) { backend in
            #expect(!backend.testRoutesEnabled)
            let loopback = try #require(URL(string: "http://127.0.0.1:\(backend.port)"))
            let unknown = try await send(to: loopback, "/no-such-route")
            #expect(unknown.status == 404)
            let answers = [
                try await send(to: loopback, "/__braze/apps/reference-app/enforcement", method: "PUT", body: Data(#"{"enforcement":"required"}"#.utf8)),
                try await send(to: loopback, "/app/braze-signature", body: Data(#"{"userId":"u1"}"#.utf8)),
            ]
            for answer in answers {
                #expect(answer.status == 404, "answer was \(answer.raw)")
                #expect(answer.raw == unknown.raw)
            }
            #expect(backend.signatureEnforcement(appId: "reference-app") == .disabled, "unchanged: still the default")
            // The vendor route and the Swift API still work.
            let signature = try backend.issueSignature(userId: "u1")
            let answer = try await send(to: loopback, "/braze/apps/reference-app/data", body: Data(dataBody(userId: nil).utf8))
            #expect(answer.status == 201)
            #expect(!signature.isEmpty)
        }
    }

    @Test("POST /app/braze-signature mints each variant and refuses bad requests like /app/login")
    func signatureMintingRoute() async throws {
        try await withBackend(signatureConfiguration()) { backend in
            func mint(_ body: String) async throws -> HTTPAnswer {
                try await send(backend, "/app/braze-signature", body: body)
            }
            func signature(_ answer: HTTPAnswer) throws -> String {
                let object = try #require(try JSONSerialization.jsonObject(with: Data(answer.raw.utf8)) as? [String: String])
                return try #require(object["signature"])
            }
            let expected: [(TokenVariant, ReferenceBackend.SignatureErrorCode)] = [
                (.expired, .expired), (.missingExp, .expirationRequired), (.wrongAlgorithm, .incorrectAlgorithm),
                (.wrongKey, .noMatchingPublicKeys), (.otherSubject, .subjectMismatch),
            ]
            for (variant, code) in expected {
                let answer = try await mint(#"{"userId":"u1","variant":"\#(variant.rawValue)"}"#)
                #expect(answer.status == 200, "answer was \(answer.raw)")
                expectRejected(try await postData(backend, signature: try signature(answer)), code)
            }
            let audience = try await mint(#"{"userId":"u1","audience":"other"}"#)
            expectRejected(try await postData(backend, signature: try signature(audience)), .invalidPayload)

            for bad in [
                #"{"userId":""}"#, #"{"variant":"valid"}"#, #"{"userId":"u1","variant":"bogus"}"#, #"{"userId":"u1","lifetimeSeconds":0}"#,
                #"{"userId":"u1","lifetimeSeconds":1e300}"#, #"{"userId":"u1","lifetimeSeconds":"60"}"#, "[]", "not json",
                #"{"userId":"\#(String(repeating: "u", count: ReferenceBackend.maximumAuthorizationHeaderSize))"}"#,
            ] {
                expectFailure(try await mint(bad), status: 400, code: .invalidRequest)
            }
            let tooLarge = Data(repeating: UInt8(ascii: " "), count: ReferenceBackend.maximumRequestBodySize + 1)
            expectFailure(try await send(to: backend.baseURL, "/app/braze-signature", body: tooLarge), status: 413, code: .bodyTooLarge)
        }
    }

    // MARK: Ledger

    @Test("The delivery ledger counts each accepted request_id: once is 1, a duplicate is 2, refused ones are not counted")
    func deliveriesCountAcceptedRequestIds() async throws {
        try await withBackend(signatureConfiguration()) { backend in
            let signature = try backend.issueSignature(userId: "u1")
            _ = try await postData(backend, signature: signature, body: dataBody(requestId: "once"))
            _ = try await postData(backend, signature: signature, body: dataBody(requestId: "twice"))
            _ = try await postData(backend, signature: signature, body: dataBody(requestId: "twice"))
            expectRejected(try await postData(backend, signature: nil, body: dataBody(requestId: "refused")), .missingToken)
            _ = try await postData(backend, signature: nil, body: dataBody(userId: nil, requestId: "anonymous"))
            // A request refused and then retried with a valid signature is delivered once.
            expectRejected(try await postData(backend, signature: nil, body: dataBody(requestId: "retried")), .missingToken)
            expectAccepted(try await postData(backend, signature: signature, body: dataBody(requestId: "retried")), requestId: "retried")
            #expect(backend.signatureDeliveries() == ["once": 1, "twice": 2, "anonymous": 1, "retried": 1])
            // Every request was recorded, with its signature header.
            let records = await backend.records()
            #expect(records.count == 7)
            #expect(records.first?.signature == signature)
            #expect(records[3].signature == nil)
        }
    }

    @Test("The error report counts failures per code under Optional and Required, per app, not under Disabled")
    func errorReportCountsPerCode() async throws {
        let apps = [ReferenceBackend.SignatureApp(id: "other-app", enforcement: .optional)]
        try await withBackend(signatureConfiguration(apps)) { backend in
            let expired = try backend.issueSignature(userId: "u1", variant: .expired)
            _ = try await postData(backend, signature: expired)
            _ = try await postData(backend, signature: expired)
            _ = try await postData(backend, signature: try backend.issueSignature(userId: "u1", variant: .wrongKey))
            try backend.setSignatureEnforcement(.optional, appId: "reference-app")
            _ = try await postData(backend, signature: try backend.issueSignature(userId: "u1", variant: .missingExp))
            try backend.setSignatureEnforcement(.disabled, appId: "reference-app")
            _ = try await postData(backend, signature: expired)
            _ = try await postData(backend, app: "other-app", signature: nil)
            #expect(backend.signatureErrorReport(appId: "reference-app") == [22: 2, 27: 1, 10: 1])
            #expect(backend.signatureErrorReport(appId: "other-app") == [26: 1])
            #expect(backend.signatureErrorReport(appId: "no-such-app").isEmpty)
        }
    }

    @Test("The delivery ledger stops counting new request ids at its capacity; known ids keep counting")
    func deliveryLedgerIsBounded() {
        #expect(ReferenceBackend.maximumSignatureDeliveryIds == 200_000)
        let ledger = SignatureLedger(capacity: 3)
        for id in ["a", "b", "c", "d", "a", "e"] { ledger.accepted(requestId: id) }
        #expect(ledger.deliveries() == ["a": 2, "b": 1, "c": 1])
        #expect(ledger.uncounted == 2)
    }

    // MARK: Hostile input

    @Test("A 9 KB signature and a 3,000-deep nested payload or header are 20 DECODING_ERROR, and the backend keeps serving")
    func hostileSignaturesAreDecodingErrors() async throws {
        let pair = try ReferenceBackend.SignatureKeyPair()
        let apps = [ReferenceBackend.SignatureApp(id: "own-keys", enforcement: .required, publicKeysPEM: [pair.publicKeyPEM])]
        try await withBackend(signatureConfiguration(apps)) { backend in
            let nine = String(repeating: "a", count: 9 * 1024)
            expectRejected(try await postData(backend, signature: nine), .decodingError)
            // Validly signed, so only the size check can refuse it.
            let padded = try pair.sign(payloadJSON: jsonData(["sub": "u1", "exp": Int(Date().timeIntervalSince1970) + 60, "pad": nine]))
            let oversized = try await postData(backend, app: "own-keys", signature: padded)
            expectRejected(oversized, .decodingError)
            #expect(oversized.reason?.contains("8192") == true)

            func nested(_ depth: Int) -> String { String(repeating: "[", count: depth) + String(repeating: "]", count: depth) }
            let deepPayload = base64URL(#"{"alg":"RS256","typ":"JWT"}"#) + "." + base64URL(nested(3_000)) + ".c2ln"
            #expect(deepPayload.utf8.count <= ReferenceBackend.maximumAuthorizationHeaderSize)
            expectRejected(try await postData(backend, signature: deepPayload), .decodingError)
            // A valid signature does not help: the payload is read before the signature is checked.
            let signedDeepPayload = try pair.sign(payloadJSON: Data(#"{"sub":"u1","x":\#(nested(2_800))}"#.utf8))
            #expect(signedDeepPayload.utf8.count <= ReferenceBackend.maximumAuthorizationHeaderSize)
            expectRejected(try await postData(backend, app: "own-keys", signature: signedDeepPayload), .decodingError)
            let deepHeader = base64URL(#"{"alg":"RS256","x":\#(nested(3_000))}"#) + "." + base64URL(#"{"sub":"u1"}"#) + ".c2ln"
            expectRejected(try await postData(backend, signature: deepHeader), .decodingError)
            for garbage in ["a.b", "a.b.c.d", "....", ".", "W10.e30.c2ln", "e30.W10.c2ln", "e30.e30.!!!!"] {
                expectRejected(try await postData(backend, signature: garbage), .decodingError)
            }
            expectAccepted(try await postData(backend, app: "own-keys", signature: try pair.signature(userId: "u1")))
        }
    }

    @Test(
        "A body that is not an object with request_id, or has user_id or events of the wrong type, is 400 invalid_request",
        arguments: [
            "", "[]", "null", "not json", #""request""#, "{}", #"{"request_id":""}"#, #"{"request_id":7}"#,
            #"{"request_id":"r","user_id":7}"#, #"{"request_id":"r","user_id":""}"#, #"{"request_id":"r","user_id":["u1"]}"#,
            #"{"request_id":"r","user_id":"u1","events":{}}"#, #"{"request_id":"r","user_id":"u1","events":["e"]}"#,
            #"{"request_id":"r","user_id":"u1","events":[{"user_id":1}]}"#, #"{"request_id":"r","user_id":"u1","events":[{"name":1}]}"#,
            #"{"request_id":"r","user_id":"u1","user_id":"u2"}"#, #"{"request_id":"r"} trailing"#,
        ]
    )
    func malformedBodiesAreRefused(_ body: String) async throws {
        try await withBackend(signatureConfiguration()) { backend in
            let signature = try backend.issueSignature(userId: "u1")
            let answer = try await postData(backend, signature: signature, body: body)
            #expect(answer.status == 400, "answer was \(answer.raw)")
            #expect(answer.object["error"] as? String == "invalid_request")
            #expect(answer.object["success"] as? Bool == false)
            #expect(backend.signatureDeliveries().isEmpty)
            #expect(await backend.records().count == 1)
        }
    }

    @Test("A request_id over 200 bytes, a 3,000-deep body and a body over 1 MiB are refused with 400, 400 and 413")
    func hostileBodiesAreRefused() async throws {
        try await withBackend(signatureConfiguration()) { backend in
            let signature = try backend.issueSignature(userId: "u1")
            let longest = String(repeating: "r", count: ReferenceBackend.maximumSignatureRequestIdSize)
            expectAccepted(try await postData(backend, signature: signature, body: dataBody(requestId: longest)), requestId: longest)
            let tooLong = try await postData(backend, signature: signature, body: dataBody(requestId: longest + "r"))
            #expect(tooLong.status == 400)
            let deep = #"{"request_id":"r","user_id":"u1","x":"# + String(repeating: "[", count: 3_000) + String(repeating: "]", count: 3_000) + "}"
            let deepAnswer = try await postData(backend, signature: signature, body: deep)
            #expect(deepAnswer.status == 400, "answer was \(deepAnswer.raw)")
            #expect(deepAnswer.object["error"] as? String == "invalid_request")
            let oversized = Data(repeating: UInt8(ascii: " "), count: ReferenceBackend.maximumRequestBodySize + 1)
            let tooLarge = try await postData(backend, signature: signature, body: oversized)
            #expect(tooLarge.status == 413)
            #expect(tooLarge.object["error"] as? String == "body_too_large")
            expectAccepted(try await postData(backend, signature: signature))
        }
    }

    @Test("An unknown app is 404 unknown_app and recorded; the reason of every failure never contains the signature")
    func unknownAppsAndReasons() async throws {
        try await withBackend(signatureConfiguration()) { backend in
            let signature = try backend.issueSignature(userId: "u1")
            let answer = try await send(backend, "/braze/apps/no-such-app/data", body: dataBody())
            expectFailure(answer, status: 404, code: .unknownApp)
            #expect(await backend.records().map(\.path) == ["/braze/apps/no-such-app/data"])
            #expect(ReferenceBackend.ErrorCode.unknownApp.rawValue == "unknown_app")

            // Reasons name the problem, never the JWT or one of its parts.
            let variants: [TokenVariant] = [.expired, .missingExp, .wrongAlgorithm, .wrongKey, .otherSubject]
            for variant in variants {
                let bad = try backend.issueSignature(userId: "u1", variant: variant)
                let reason = try #require(try await postData(backend, signature: bad).reason)
                for part in [bad] + bad.split(separator: ".").map(String.init) where part.count > 8 {
                    #expect(!reason.contains(part), "\(variant): \(reason)")
                }
            }
            let tampered = String(signature.dropLast(4)) + "AAAA"
            let tamperedAnswer = try await postData(backend, signature: tampered)
            expectRejected(tamperedAnswer, .noMatchingPublicKeys)
            let reason = try #require(tamperedAnswer.reason)
            #expect(!reason.contains(tampered))
        }
    }
}
