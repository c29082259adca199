import Foundation
import SDKAuthorizationTesting
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationSignature
import SDKAuthorizationModeKit

/// A signature as the app's server would make it: RS256-shaped, `sub` = the user.
func signature(_ user: String, _ serial: Int = 1) -> String {
    makeJWT(["sub": user, "exp": 1_900_000_000 + serial, "aud": "braze"])
}

/// A Braze-style rejection: 401 with `auth_error`.
func authErrorResponse(_ code: Int, user: String? = nil, optional: Bool = false, status: Int = 401) -> ServerResponse {
    let userPart = user.map { #","user_id":"\#($0)""# } ?? ""
    let optionalPart = optional ? #","optional":true"# : ""
    return ServerResponse(statusCode: status, body: Data(#"{"auth_error":{"error_code":\#(code),"reason":"code \#(code)"\#(optionalPart)}\#(userPart)}"#.utf8))
}

/// A client that gives every request to sdk.example.com the signature scheme.
func signatureClient(_ authentication: SignatureAuthentication, transport: RecordingTransport, diagnostics: any DiagnosticsSink = RecordingDiagnosticsSink()) throws -> AuthorizedHTTPClient {
    var policy = AuthorizationPolicy()
    policy.add(try AuthorizationRule(host: "sdk.example.com", path: "/**", scheme: .signature))
    let authorizer = try RequestAuthorizer(policy: policy, providers: [.signature: authentication], diagnostics: diagnostics)
    return AuthorizedHTTPClient(authorizer: authorizer, transport: transport)
}

let dataURL = URL(string: "https://sdk.example.com/api/v3/data")!

@Suite("Signature mode: users, signatures, failure subscriptions", .hangLimit)
struct SignatureAuthenticationTests {
    let sink = RecordingDiagnosticsSink()

    @Test func signatureGoesInItsOwnHeaderForTheCurrentUser() async throws {
        let authentication = try SignatureAuthentication(diagnostics: sink)
        try authentication.changeUser("user-1", signature: signature("user-1"))
        let transport = RecordingTransport(statusCode: 201)
        let client = try signatureClient(authentication, transport: transport)
        _ = try await client.send(OutgoingRequest(method: "POST", url: dataURL, body: Data("{}".utf8)))
        let sent = try #require(transport.requests.first)
        #expect(sent.value(forHeader: "X-Braze-Auth-Signature") == signature("user-1"))
        #expect(sent.value(forHeader: "Authorization") == nil)
    }

    @Test func aCustomHeaderNameCarriesTheSignatureAndAuthorizationIsRefused() async throws {
        let authentication = try SignatureAuthentication(headerName: "X-SDK-Signature", diagnostics: sink)
        try authentication.changeUser("user-1", signature: signature("user-1"))
        let transport = RecordingTransport(statusCode: 201)
        _ = try await signatureClient(authentication, transport: transport).send(OutgoingRequest(method: "POST", url: dataURL))
        #expect(transport.requests.first?.value(forHeader: "X-SDK-Signature") == signature("user-1"))
        for bad in ["Authorization", "authorization", "", "X Bad", "X-Bad\r\n", String(repeating: "x", count: 129)] {
            #expect(throws: ConfigurationError.self) { try SignatureAuthentication(headerName: bad) }
        }
    }

    @Test func aUserWithoutASignatureIsSentWithoutOne() async throws {
        let authentication = try SignatureAuthentication(diagnostics: sink)
        try authentication.changeUser("user-1")
        let transport = RecordingTransport(statusCode: 201)
        _ = try await signatureClient(authentication, transport: transport).send(OutgoingRequest(method: "POST", url: dataURL))
        #expect(transport.requests.first?.value(forHeader: "X-Braze-Auth-Signature") == nil)
    }

    @Test func badUserIDsAndSignaturesAreRefusedWithAClearError() throws {
        let authentication = try SignatureAuthentication(diagnostics: sink)
        let badUsers = ["", "user\n1", "user\u{0}", "a\u{2028}b", String(repeating: "u", count: 998)]
        for user in badUsers {
            #expect(throws: ConfigurationError.self) { try authentication.changeUser(user) }
        }
        let badSignatures = ["", "not-a-jwt", "a.b", "a.b.c.d", "a.b.c\r\nX-Injected: 1", "a b.c.d", "é.b.c", String(repeating: "a", count: 8_193) + ".b.c"]
        for bad in badSignatures {
            #expect(throws: ConfigurationError.self) { try authentication.changeUser("user-1", signature: bad) }
        }
        #expect(authentication.currentUserId == nil, "a refused change leaves no user")
        #expect(throws: ConfigurationError.invalidValue(key: "signature", reason: "there is no current user; call changeUser(_:signature:) first")) {
            try authentication.setSignature(signature("user-1"))
        }
    }

    @Test func aUserIDOf997BytesAndASignatureOf8192AreTakenAndOneByteMoreIsRefusedNamingItsKey() throws {
        let authentication = try SignatureAuthentication(diagnostics: sink)
        let longestUser = String(repeating: "u", count: 997)
        let start = signature(longestUser)
        let longestSignature = start + String(repeating: "a", count: 8_192 - start.utf8.count)
        try authentication.changeUser(longestUser, signature: longestSignature)
        #expect(authentication.currentUserId == longestUser)
        #expect(throws: ConfigurationError.invalidValue(key: "userId", reason: "must be 1 to 997 UTF-8 bytes")) {
            try authentication.changeUser(longestUser + "u")
        }
        #expect(throws: ConfigurationError.invalidValue(key: "signature", reason: "must be 1 to 8192 bytes")) {
            try authentication.setSignature(longestSignature + "a")
        }
        #expect(authentication.currentUserId == longestUser, "a refused change leaves the user as it was")
    }

    @Test func changeUserKeepsEachUsersOwnSignature() async throws {
        let authentication = try SignatureAuthentication(diagnostics: sink)
        try authentication.changeUser("user-1", signature: signature("user-1"))
        try authentication.changeUser("user-2", signature: signature("user-2"))
        try authentication.setSignature(signature("user-1", 2), for: "user-1")
        #expect(authentication.currentUserId == "user-2")
        #expect(authentication.signature(for: "user-1") == signature("user-1", 2))
        #expect(authentication.signature(for: "user-2") == signature("user-2"))
        try authentication.changeUser("user-1")
        #expect(authentication.signature(for: "user-1") == signature("user-1", 2), "changing back without a signature keeps the user's own")
        await authentication.identityDidChange()
        #expect(authentication.currentUserId == nil)
        #expect(authentication.signature(for: "user-2") == signature("user-2"), "earlier users keep theirs for their queued requests")
    }

    @Test func onlyTheMostRecentUsersSignaturesAreKept() throws {
        let authentication = try SignatureAuthentication(diagnostics: sink)
        for index in 0...SignatureAuthentication.maximumRememberedUsers {
            try authentication.changeUser("user-\(index)", signature: signature("user-\(index)"))
        }
        #expect(authentication.signature(for: "user-0") == nil)
        #expect(authentication.signature(for: "user-1") != nil)
    }

    @Test func theTenKnownErrorCodesAreTypedAndUnknownOnesKept() {
        let known: [(Int, SignatureErrorCode)] = [
            (10, .expirationRequired), (20, .decodingError), (21, .subjectMismatch), (22, .expired), (23, .invalidPayload),
            (24, .incorrectAlgorithm), (25, .publicKeyError), (26, .missingToken), (27, .noMatchingPublicKeys), (28, .payloadUserIDMismatch),
        ]
        for (number, code) in known {
            #expect(SignatureErrorCode(rawValue: number) == code)
            #expect(code.rawValue == number)
            let failure = SignatureFailure.reported(in: authErrorResponse(number, user: "u").body, signature: "s.i.g", requestUser: nil)
            #expect(failure?.errorCode == code)
            #expect(failure?.userId == "u")
            #expect(failure?.reason == "code \(number)")
            #expect(failure?.optional == false)
        }
        #expect(SignatureErrorCode(rawValue: 99) == .unrecognized(99))
        #expect(SignatureFailure.reported(in: authErrorResponse(99).body, signature: nil, requestUser: "me")?.errorCode.rawValue == 99)
        #expect(SignatureErrorCode.expired.description == "EXPIRED (22)")
        #expect(SignatureFailure.reported(in: authErrorResponse(22, optional: true).body, signature: nil, requestUser: nil)?.optional == true)
    }

    @Test func everyBrazeErrorCodeHasItsVendorNameExactly() {
        // The names of SPEC §4, spelled as the vendor spells them: a shortened or misspelled one fails.
        let names: [(SignatureErrorCode, String)] = [
            (.expirationRequired, "EXPIRATION_REQUIRED (10)"), (.decodingError, "DECODING_ERROR (20)"),
            (.subjectMismatch, "SUBJECT_MISMATCH (21)"), (.expired, "EXPIRED (22)"), (.invalidPayload, "INVALID_PAYLOAD (23)"),
            (.incorrectAlgorithm, "INCORRECT_ALGORITHM (24)"), (.publicKeyError, "PUBLIC_KEY_ERROR (25)"),
            (.missingToken, "MISSING_TOKEN (26)"), (.noMatchingPublicKeys, "NO_MATCHING_PUBLIC_KEYS (27)"),
            (.payloadUserIDMismatch, "PAYLOAD_USER_ID_MISMATCH (28)"),
        ]
        #expect(names.count == 10)
        for (code, name) in names {
            #expect(code.description == name)
            #expect("\(code)" == name)
        }
        #expect(SignatureErrorCode.unrecognized(99).description == "UNRECOGNIZED (99)")
    }

    @Test func anErrorBodyOfExactly64KiBIsReadAndOneByteMoreIsNot() {
        /// An `auth_error` body padded to `size` bytes.
        func body(size: Int) -> Data {
            let start = Data(#"{"auth_error":{"error_code":22},"pad":""#.utf8), end = Data(#""}"#.utf8)
            return start + Data(repeating: UInt8(ascii: "a"), count: size - start.count - end.count) + end
        }
        #expect(body(size: 65_536).count == 65_536)
        #expect(SignatureFailure.reported(in: body(size: 65_536), signature: nil, requestUser: nil)?.errorCode == .expired)
        #expect(SignatureFailure.reported(in: body(size: 65_537), signature: nil, requestUser: nil) == nil)
    }

    @Test func malformedErrorBodiesReportNothingAndNeverTrap() {
        let bodies: [Data] = [
            Data(), Data("not json".utf8), Data("[]".utf8), Data(#"{"auth_error":"22"}"#.utf8),
            Data(#"{"auth_error":{"error_code":"22"}}"#.utf8), Data(#"{"auth_error":{"error_code":22.5}}"#.utf8),
            Data(#"{"auth_error":{"error_code":1e300}}"#.utf8), Data(#"{"auth_error":{"reason":"no code"}}"#.utf8),
            Data(#"{"auth_error":{"error_code":22},"auth_error":{"error_code":23}}"#.utf8),
            Data((String(repeating: "[", count: 5_000) + String(repeating: "]", count: 5_000)).utf8),
            Data(#"{"auth_error":{"error_code":22,"reason":""#.utf8),
            Data(#"{"auth_error":{"error_code":22},"pad":""#.utf8) + Data(repeating: UInt8(ascii: "a"), count: 70_000) + Data(#""}"#.utf8),
            Data([0xFF, 0xFE, 0x7B]),
        ]
        for body in bodies {
            #expect(SignatureFailure.reported(in: body, signature: nil, requestUser: nil) == nil)
        }
    }

    @Test func oneFailureEventPerRejectedSignatureNotOnePerRequest() async throws {
        let authentication = try SignatureAuthentication(diagnostics: sink)
        try authentication.changeUser("user-1", signature: signature("user-1"))
        let events = Locked<[SignatureFailure]>([])
        let subscription = authentication.subscribeToFailures { failure in events.withLock { $0.append(failure) } }
        let transport = RecordingTransport { _ in authErrorResponse(22, user: "user-1") }
        let client = try signatureClient(authentication, transport: transport)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<20 {
                group.addTask { _ = try? await client.send(OutgoingRequest(method: "POST", url: dataURL)) }
            }
        }
        #expect(transport.requests.count == 20, "a rejected signature is not retried at once: a new one must come from the app")
        await authentication.failuresDelivered()
        let received = events.withLock { $0 }
        #expect(received.count == 1)
        #expect(received.first == SignatureFailure(errorCode: .expired, reason: "code 22", userId: "user-1", signature: signature("user-1"), optional: false))
        try authentication.setSignature(signature("user-1", 2))
        _ = try? await client.send(OutgoingRequest(method: "POST", url: dataURL))
        await authentication.failuresDelivered()
        #expect(events.withLock { $0.count } == 2, "a new signature that fails is reported again")
        subscription.cancel()
    }

    @Test func severalSubscribersEachReceiveAndLateOrCancelledOnesDoNot() async throws {
        let authentication = try SignatureAuthentication(diagnostics: sink)
        try authentication.changeUser("user-1", signature: signature("user-1"))
        let first = Locked(0), second = Locked(0), late = Locked(0)
        let subscriptionA = authentication.subscribeToFailures { _ in first.withLock { $0 += 1 } }
        let subscriptionB = authentication.subscribeToFailures { _ in second.withLock { $0 += 1 } }
        let client = try signatureClient(authentication, transport: RecordingTransport { _ in authErrorResponse(27) })
        _ = try? await client.send(OutgoingRequest(method: "POST", url: dataURL))
        await authentication.failuresDelivered()
        let subscriptionLate = authentication.subscribeToFailures { _ in late.withLock { $0 += 1 } }
        subscriptionB.cancel()
        subscriptionB.cancel()
        #expect(first.withLock { $0 } == 1 && second.withLock { $0 } == 1)
        #expect(late.withLock { $0 } == 0, "a subscriber added late does not get old events")
        try authentication.setSignature(signature("user-1", 2))
        _ = try? await client.send(OutgoingRequest(method: "POST", url: dataURL))
        await authentication.failuresDelivered()
        #expect(first.withLock { $0 } == 2 && second.withLock { $0 } == 1 && late.withLock { $0 } == 1)
        _ = (subscriptionA, subscriptionLate)
    }

    @Test func aReleasedSubscriptionEndsItsDeliveries() async throws {
        let authentication = try SignatureAuthentication(diagnostics: sink)
        try authentication.changeUser("user-1", signature: signature("user-1"))
        let count = Locked(0)
        do {
            let subscription = authentication.subscribeToFailures { _ in count.withLock { $0 += 1 } }
            _ = subscription
        }
        _ = try? await signatureClient(authentication, transport: RecordingTransport { _ in authErrorResponse(22) }).send(OutgoingRequest(method: "POST", url: dataURL))
        await authentication.failuresDelivered()
        #expect(count.withLock { $0 } == 0)
    }

    @Test func noSignatureAppearsInAnyDescriptionDumpOrLog() async throws {
        let authentication = try SignatureAuthentication(diagnostics: sink)
        let secret = signature("user-1")
        try authentication.changeUser("user-1", signature: secret)
        let failure = SignatureFailure(errorCode: .expired, reason: "expired", userId: "user-1", signature: secret, optional: false)
        var dumped = ""
        dump(failure, to: &dumped)
        dump(authentication, to: &dumped)
        let texts = [failure.description, failure.debugDescription, "\(failure)", authentication.description, dumped]
        let tail = String(secret.suffix(20))
        for text in texts { #expect(!text.contains(tail)) }
        _ = try? await signatureClient(authentication, transport: RecordingTransport { _ in authErrorResponse(22) }, diagnostics: sink).send(OutgoingRequest(method: "POST", url: dataURL))
        for diagnostic in sink.diagnostics { #expect(!diagnostic.message.contains(tail)) }
        #expect(sink.diagnostics.contains { $0.message.contains("EXPIRED (22)") })
    }
}
