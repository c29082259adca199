import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import ReferenceBackend
import Synchronization
import Testing

// MARK: - Helpers

/// The backend's clock in these tests: set by hand, never the wall clock.
final class DPoPTestClock: Sendable {
    private let date = Mutex(Date(timeIntervalSince1970: 1_800_000_000))

    var now: Date { date.withLock { $0 } }

    func advance(by seconds: TimeInterval) {
        date.withLock { $0 = $0.addingTimeInterval(seconds) }
    }
}

/// A client's DPoP key: builds proof JWTs (RFC 9449 §4.2) signed with swift-crypto P-256.
struct DPoPProver {
    let key = P256.Signing.PrivateKey()

    var x: String { base64URL(key.publicKey.rawRepresentation.prefix(32)) }
    var y: String { base64URL(key.publicKey.rawRepresentation.suffix(32)) }

    /// The RFC 7638 thumbprint, computed here independently of the backend.
    var jkt: String {
        base64URL(Data(SHA256.hash(data: Data(#"{"crv":"P-256","kty":"EC","x":"\#(x)","y":"\#(y)"}"#.utf8))))
    }

    var jwk: [String: Any] { ["kty": "EC", "crv": "P-256", "x": x, "y": y] }

    /// What a proof may get wrong; each field replaces the correct value when set.
    struct Tampering {
        var header: [String: Any] = [:]
        var removedHeader: [String] = []
        var claims: [String: Any] = [:]
        var removedClaims: [String] = []
        var signer: P256.Signing.PrivateKey?
        /// `"none"` (empty signature), `"HS256"` (HMAC with the x coordinate as the secret), or nil (ES256).
        var signature: String?
    }

    func proof(
        htm: String,
        htu: String,
        iat: Date,
        nonce: String? = nil,
        accessToken: String? = nil,
        jti: String = UUID().uuidString,
        tampering: Tampering = Tampering()
    ) -> String {
        var header: [String: Any] = ["typ": "dpop+jwt", "alg": "ES256", "jwk": jwk]
        header.merge(tampering.header) { _, new in new }
        for name in tampering.removedHeader { header[name] = nil }
        var claims: [String: Any] = ["jti": jti, "htm": htm, "htu": htu, "iat": Int(iat.timeIntervalSince1970)]
        if let nonce { claims["nonce"] = nonce }
        if let accessToken { claims["ath"] = base64URL(Data(SHA256.hash(data: Data(accessToken.utf8)))) }
        claims.merge(tampering.claims) { _, new in new }
        for name in tampering.removedClaims { claims[name] = nil }
        func segment(_ object: [String: Any]) -> String {
            base64URL((try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data())
        }
        let input = segment(header) + "." + segment(claims)
        switch tampering.signature {
        case "none":
            return input + "."
        case "HS256":
            let mac = HMAC<SHA256>.authenticationCode(for: Data(input.utf8), using: SymmetricKey(data: Data(x.utf8)))
            return input + "." + base64URL(Data(mac))
        default:
            let signature = (try? (tampering.signer ?? key).signature(for: Data(input.utf8)).rawRepresentation) ?? Data()
            return input + "." + base64URL(signature)
        }
    }
}

struct DPoPAnswer {
    var status: Int
    var headers: HTTPFields
    var object: [String: Any]
    var raw: String

    var error: String? { object["error"] as? String }
    var nonce: String? { headers[HTTPFields.Element.Name("DPoP-Nonce")!] }
    var challenge: String? { headers[.wwwAuthenticate] }
}

let dpopClient = "sample-dpop-client"

/// Sends a raw HTTP/1.1 request (so that any number of `DPoP` fields can be sent) and reads the answer.
func dpopSend(
    _ backend: ReferenceBackend,
    _ path: String,
    method: HTTPRequest.Method = .post,
    authority: String? = nil,
    authorization: String? = nil,
    proofs: [String] = [],
    body: String? = nil
) async throws -> DPoPAnswer {
    var headers = HTTPFields()
    if let authorization { headers[.authorization] = authorization }
    for proof in proofs { headers.append(HTTPFields.Element(name: HTTPFields.Element.Name("DPoP")!, value: proof)) }
    if body != nil { headers[.contentType] = "application/x-www-form-urlencoded" }
    let request = TestClient.Request(path, method: method, authority: authority, headers: headers, body: body.map { ByteBuffer(string: $0) })
    let response = try await TestClient.withClient(host: "127.0.0.1", port: backend.port) { client in
        try await client.execute(request)
    }
    let raw = response.body.map { String(buffer: $0) } ?? ""
    let object = (try? JSONSerialization.jsonObject(with: Data(raw.utf8))) as? [String: Any] ?? [:]
    return DPoPAnswer(status: Int(response.status.code), headers: response.headers, object: object, raw: raw)
}

/// Starts a backend on the test clock.
func withDPoPBackend<T>(
    _ clock: DPoPTestClock = DPoPTestClock(),
    lifetime: TimeInterval = 300,
    _ body: (ReferenceBackend) async throws -> T
) async throws -> T {
    try await withBackend(ReferenceBackend.Configuration(dpopTokenLifetime: lifetime, now: { clock.now }), body)
}

extension ReferenceBackend {
    var dpopTokenURL: String { baseURL.absoluteString + "/dpop/token" }
    var dpopResourceURL: String { baseURL.absoluteString + "/dpop/resource" }
}

let clientCredentials = "grant_type=client_credentials&client_id=\(dpopClient)"

/// Expects a failure answer: this status and code, a description, and no `DPoP-Nonce` unless asked.
func expectDPoPFailure(
    _ answer: DPoPAnswer,
    status: Int,
    _ code: ReferenceBackend.DPoPErrorCode,
    challenge: String? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(answer.status == status, "answer was \(answer.raw)", sourceLocation: sourceLocation)
    #expect(answer.error == code.rawValue, "answer was \(answer.raw)", sourceLocation: sourceLocation)
    #expect((answer.object["error_description"] as? String)?.isEmpty == false, sourceLocation: sourceLocation)
    #expect(answer.object.count == 2, "answer was \(answer.raw)", sourceLocation: sourceLocation)
    #expect(answer.headers[.contentType] == "application/json", sourceLocation: sourceLocation)
    if let challenge {
        #expect(answer.challenge == challenge, sourceLocation: sourceLocation)
    }
}

/// The current nonce: a token request without one is answered with it.
func currentNonce(_ backend: ReferenceBackend, _ clock: DPoPTestClock) async throws -> String {
    let prover = DPoPProver()
    let answer = try await dpopSend(
        backend, "/dpop/token", proofs: [prover.proof(htm: "POST", htu: backend.dpopTokenURL, iat: clock.now)], body: clientCredentials
    )
    expectDPoPFailure(answer, status: 400, .useDPoPNonce)
    return try #require(answer.nonce)
}

/// A DPoP access token bound to `prover`'s key.
func dpopToken(_ backend: ReferenceBackend, _ clock: DPoPTestClock, _ prover: DPoPProver) async throws -> String {
    let nonce = try await currentNonce(backend, clock)
    let answer = try await dpopSend(
        backend, "/dpop/token",
        proofs: [prover.proof(htm: "POST", htu: backend.dpopTokenURL, iat: clock.now, nonce: nonce)], body: clientCredentials
    )
    #expect(answer.status == 200, "answer was \(answer.raw)")
    return try #require(answer.object["access_token"] as? String)
}

// MARK: - Tests

@Suite("Reference backend DPoP (RFC 9449)", .timeLimit(.minutes(3)))
struct DPoPTests {
    // MARK: Happy path and nonces

    @Test func aValidTokenRequestThenAValidResourceRequestSucceedWithTheClientAsSubjectAndTheKeyThumbprint() async throws {
        let clock = DPoPTestClock()
        try await withDPoPBackend(clock) { backend in
            let prover = DPoPProver()
            let nonce = try await currentNonce(backend, clock)
            let issued = try await dpopSend(
                backend, "/dpop/token",
                proofs: [prover.proof(htm: "POST", htu: backend.dpopTokenURL, iat: clock.now, nonce: nonce)], body: clientCredentials
            )
            #expect(issued.status == 200, "answer was \(issued.raw)")
            #expect(issued.object["token_type"] as? String == "DPoP")
            #expect(issued.object["expires_in"] as? Int == 300)
            #expect(issued.nonce == nonce)
            #expect(issued.headers[.cacheControl] == "no-store")
            let token = try #require(issued.object["access_token"] as? String)

            for method in [HTTPRequest.Method.get, .post] {
                let answer = try await dpopSend(
                    backend, "/dpop/resource", method: method, authorization: "DPoP \(token)",
                    proofs: [prover.proof(htm: method.rawValue, htu: backend.dpopResourceURL, iat: clock.now, nonce: nonce, accessToken: token)]
                )
                #expect(answer.status == 200, "answer was \(answer.raw)")
                #expect(answer.object["success"] as? Bool == true)
                #expect(answer.object["subject"] as? String == dpopClient)
                #expect(answer.object["jkt"] as? String == prover.jkt)
                #expect(answer.nonce == nonce)
            }
            // The scheme is case-insensitive.
            let lowercase = try await dpopSend(
                backend, "/dpop/resource", method: .get, authorization: "dpop \(token)",
                proofs: [prover.proof(htm: "GET", htu: backend.dpopResourceURL, iat: clock.now, nonce: nonce, accessToken: token)]
            )
            #expect(lowercase.status == 200, "answer was \(lowercase.raw)")
        }
    }

    @Test func aFirstRequestWithoutANonceIsAnsweredWithUseDPoPNonceAndTheCurrentNonceAndTheRetryWithItSucceeds() async throws {
        let clock = DPoPTestClock()
        try await withDPoPBackend(clock) { backend in
            let prover = DPoPProver()
            let first = try await dpopSend(
                backend, "/dpop/token", proofs: [prover.proof(htm: "POST", htu: backend.dpopTokenURL, iat: clock.now)], body: clientCredentials
            )
            expectDPoPFailure(first, status: 400, .useDPoPNonce)
            let nonce = try #require(first.nonce)
            #expect(Data(base64Encoded: nonce.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/") + "=")?.count ?? 0 >= 16)
            let retry = try await dpopSend(
                backend, "/dpop/token",
                proofs: [prover.proof(htm: "POST", htu: backend.dpopTokenURL, iat: clock.now, nonce: nonce)], body: clientCredentials
            )
            #expect(retry.status == 200, "answer was \(retry.raw)")
            let token = try #require(retry.object["access_token"] as? String)

            // The resource asks the same way, with a 401 and a DPoP challenge.
            let noNonce = try await dpopSend(
                backend, "/dpop/resource", method: .get, authorization: "DPoP \(token)",
                proofs: [prover.proof(htm: "GET", htu: backend.dpopResourceURL, iat: clock.now, accessToken: token)]
            )
            expectDPoPFailure(
                noNonce, status: 401, .useDPoPNonce,
                challenge: #"DPoP error="use_dpop_nonce", error_description="Resource server requires nonce in DPoP proof", algs="ES256""#
            )
            #expect(noNonce.nonce == nonce)
            let withNonce = try await dpopSend(
                backend, "/dpop/resource", method: .get, authorization: "DPoP \(token)",
                proofs: [prover.proof(htm: "GET", htu: backend.dpopResourceURL, iat: clock.now, nonce: nonce, accessToken: token)]
            )
            #expect(withNonce.status == 200, "answer was \(withNonce.raw)")
        }
    }

    @Test func aRotatedNonceIsRefusedWithUseDPoPNonceAndTheNewNonceIsGivenAndAccepted() async throws {
        let clock = DPoPTestClock()
        try await withDPoPBackend(clock) { backend in
            let prover = DPoPProver()
            let token = try await dpopToken(backend, clock, prover)
            let old = try await currentNonce(backend, clock)
            backend.rotateDPoPNonce()

            let tokenRequest = try await dpopSend(
                backend, "/dpop/token",
                proofs: [prover.proof(htm: "POST", htu: backend.dpopTokenURL, iat: clock.now, nonce: old)], body: clientCredentials
            )
            expectDPoPFailure(tokenRequest, status: 400, .useDPoPNonce)
            let new = try #require(tokenRequest.nonce)
            #expect(new != old)

            let stale = try await dpopSend(
                backend, "/dpop/resource", method: .get, authorization: "DPoP \(token)",
                proofs: [prover.proof(htm: "GET", htu: backend.dpopResourceURL, iat: clock.now, nonce: old, accessToken: token)]
            )
            expectDPoPFailure(stale, status: 401, .useDPoPNonce)
            #expect(stale.nonce == new)
            let fresh = try await dpopSend(
                backend, "/dpop/resource", method: .get, authorization: "DPoP \(token)",
                proofs: [prover.proof(htm: "GET", htu: backend.dpopResourceURL, iat: clock.now, nonce: new, accessToken: token)]
            )
            #expect(fresh.status == 200, "answer was \(fresh.raw)")
        }
    }

    // MARK: Token request

    @Test(arguments: [
        ("grant_type=authorization_code&client_id=sample-dpop-client", ReferenceBackend.DPoPErrorCode.unsupportedGrantType),
        ("client_id=sample-dpop-client", .unsupportedGrantType),
        ("grant_type=client_credentials&client_id=another-client", .invalidClient),
        ("grant_type=client_credentials", .invalidClient),
        ("grant_type=client_credentials&client_id=sample-dpop-client&client_id=another-client", .invalidRequest),
        ("grant_type=client_credentials&client_id=sample%2", .invalidRequest),
        ("grant_type=client_credentials&client_id=%FF", .invalidRequest),
    ])
    func aTokenRequestWithAWrongGrantTypeOrClientIsRefusedWithItsOAuthCode(body: String, code: ReferenceBackend.DPoPErrorCode) async throws {
        let clock = DPoPTestClock()
        try await withDPoPBackend(clock) { backend in
            let nonce = try await currentNonce(backend, clock)
            let answer = try await dpopSend(
                backend, "/dpop/token", proofs: [DPoPProver().proof(htm: "POST", htu: backend.dpopTokenURL, iat: clock.now, nonce: nonce)], body: body
            )
            expectDPoPFailure(answer, status: 400, code)
        }
    }

    @Test func aPercentEncodedFormIsDecoded() async throws {
        let clock = DPoPTestClock()
        try await withBackend(ReferenceBackend.Configuration(dpopClientIDs: [dpopClient, "sample client/ü"], now: { clock.now })) { backend in
            let nonce = try await currentNonce(backend, clock)
            let prover = DPoPProver()
            let answer = try await dpopSend(
                backend, "/dpop/token", proofs: [prover.proof(htm: "POST", htu: backend.dpopTokenURL, iat: clock.now, nonce: nonce)],
                body: "grant_type=client%5Fcredentials&client_id=sample+client%2F%C3%BC"
            )
            #expect(answer.status == 200, "answer was \(answer.raw)")
            let token = try #require(answer.object["access_token"] as? String)
            let resource = try await dpopSend(
                backend, "/dpop/resource", method: .get, authorization: "DPoP \(token)",
                proofs: [prover.proof(htm: "GET", htu: backend.dpopResourceURL, iat: clock.now, nonce: nonce, accessToken: token)]
            )
            #expect(resource.object["subject"] as? String == "sample client/ü")
        }
    }

    // MARK: Proof verification

    enum BadProof: String, CaseIterable, Sendable {
        case wrongHTM, htuOfAnotherEndpoint, htuOnAnotherPort, htuOnAnotherScheme, iatTooOld, iatInTheFuture, iatAsString
        case algNone, algHS256, typJWT, noTyp, jwkWithPrivateKey, jwkOnAnotherCurve, noJWK, signedByAnotherKey
        case noJTI, jtiTooLong, nonceNotAString, criticalHeader
    }

    func tampered(_ bad: BadProof, prover: DPoPProver, backend: ReferenceBackend, clock: DPoPTestClock, nonce: String) -> String {
        var htm = "POST", htu = backend.dpopTokenURL, iat = clock.now
        var tampering = DPoPProver.Tampering()
        switch bad {
        case .wrongHTM: htm = "GET"
        case .htuOfAnotherEndpoint: htu = backend.dpopResourceURL
        case .htuOnAnotherPort: htu = "http://127.0.0.1:\(backend.port == 1 ? 2 : backend.port - 1)/dpop/token"
        case .htuOnAnotherScheme: htu = "https://127.0.0.1:\(backend.port)/dpop/token"
        case .iatTooOld: iat = clock.now.addingTimeInterval(-61)
        case .iatInTheFuture: iat = clock.now.addingTimeInterval(61)
        case .iatAsString: tampering.claims["iat"] = String(Int(clock.now.timeIntervalSince1970))
        case .algNone: tampering.header["alg"] = "none"; tampering.signature = "none"
        case .algHS256: tampering.header["alg"] = "HS256"; tampering.signature = "HS256"
        case .typJWT: tampering.header["typ"] = "JWT"
        case .noTyp: tampering.removedHeader = ["typ"]
        case .jwkWithPrivateKey: tampering.header["jwk"] = prover.jwk.merging(["d": base64URL(prover.key.rawRepresentation)]) { _, new in new }
        case .jwkOnAnotherCurve: tampering.header["jwk"] = prover.jwk.merging(["crv": "P-384"]) { _, new in new }
        case .noJWK: tampering.removedHeader = ["jwk"]
        case .signedByAnotherKey: tampering.signer = P256.Signing.PrivateKey()
        case .noJTI: tampering.removedClaims = ["jti"]
        case .jtiTooLong: tampering.claims["jti"] = String(repeating: "j", count: 257)
        case .nonceNotAString: tampering.claims["nonce"] = 1
        case .criticalHeader: tampering.header["crit"] = ["exp"]
        }
        return prover.proof(htm: htm, htu: htu, iat: iat, nonce: nonce, tampering: tampering)
    }

    @Test(arguments: BadProof.allCases)
    func eachBadProofIsRefusedWithInvalidDPoPProofAndNoTokenIsIssued(bad: BadProof) async throws {
        let clock = DPoPTestClock()
        try await withDPoPBackend(clock) { backend in
            let nonce = try await currentNonce(backend, clock)
            let prover = DPoPProver()
            let proof = tampered(bad, prover: prover, backend: backend, clock: clock, nonce: nonce)
            let answer = try await dpopSend(backend, "/dpop/token", proofs: [proof], body: clientCredentials)
            expectDPoPFailure(answer, status: 400, .invalidDPoPProof)
            #expect(answer.nonce == nil)
            #expect(!answer.raw.contains(proof) && !answer.raw.contains(prover.x))
            // The same request with an untampered proof is accepted: the tampering alone was refused.
            let good = try await dpopSend(
                backend, "/dpop/token", proofs: [prover.proof(htm: "POST", htu: backend.dpopTokenURL, iat: clock.now, nonce: nonce)],
                body: clientCredentials
            )
            #expect(good.status == 200, "answer was \(good.raw)")
        }
    }

    @Test func theIatMayLieUpToSixtySecondsEitherSideOfTheServerClock() async throws {
        let clock = DPoPTestClock()
        try await withDPoPBackend(clock) { backend in
            let nonce = try await currentNonce(backend, clock)
            for offset in [-60.0, 60.0] {
                let answer = try await dpopSend(
                    backend, "/dpop/token",
                    proofs: [DPoPProver().proof(htm: "POST", htu: backend.dpopTokenURL, iat: clock.now.addingTimeInterval(offset), nonce: nonce)],
                    body: clientCredentials
                )
                #expect(answer.status == 200, "offset \(offset): \(answer.raw)")
            }
        }
    }

    @Test func theHTUIsComparedWithoutQueryAndFragmentWithSchemeAndHostLowercasedAndTheDefaultPortDropped() async throws {
        let clock = DPoPTestClock()
        try await withDPoPBackend(clock) { backend in
            let nonce = try await currentNonce(backend, clock)
            let prover = DPoPProver()
            func request(htu: String, authority: String? = nil) async throws -> DPoPAnswer {
                try await dpopSend(
                    backend, "/dpop/token", authority: authority,
                    proofs: [prover.proof(htm: "POST", htu: htu, iat: clock.now, nonce: nonce)], body: clientCredentials
                )
            }
            #expect(try await request(htu: "HTTP://127.0.0.1:\(backend.port)/dpop/token?x=1#y").status == 200)
            // Reached as localhost (the request's Host), on the default port, or as named by the Host.
            #expect(try await request(htu: "http://LOCALHOST:\(backend.port)/dpop/token", authority: "localhost:\(backend.port)").status == 200)
            #expect(try await request(htu: "http://reference.test/dpop/token", authority: "reference.test:80").status == 200)
            // Not another host than the request names, nor another path.
            expectDPoPFailure(try await request(htu: "http://localhost:\(backend.port)/dpop/token"), status: 400, .invalidDPoPProof)
            expectDPoPFailure(try await request(htu: "http://127.0.0.1:\(backend.port)/dpop/token/"), status: 400, .invalidDPoPProof)
            expectDPoPFailure(try await request(htu: "http://user@127.0.0.1:\(backend.port)/dpop/token"), status: 400, .invalidDPoPProof)
            expectDPoPFailure(try await request(htu: "/dpop/token"), status: 400, .invalidDPoPProof)
        }
    }

    @Test func aReplayedProofOrAReusedJTIIsRefused() async throws {
        let clock = DPoPTestClock()
        try await withDPoPBackend(clock) { backend in
            let nonce = try await currentNonce(backend, clock)
            let prover = DPoPProver()
            let proof = prover.proof(htm: "POST", htu: backend.dpopTokenURL, iat: clock.now, nonce: nonce, jti: "jti-1")
            #expect(try await dpopSend(backend, "/dpop/token", proofs: [proof], body: clientCredentials).status == 200)
            expectDPoPFailure(try await dpopSend(backend, "/dpop/token", proofs: [proof], body: clientCredentials), status: 400, .invalidDPoPProof)
            // A new proof (another key, later iat) with the same jti is a replay too.
            clock.advance(by: 30)
            let again = DPoPProver().proof(htm: "POST", htu: backend.dpopTokenURL, iat: clock.now, nonce: nonce, jti: "jti-1")
            expectDPoPFailure(try await dpopSend(backend, "/dpop/token", proofs: [again], body: clientCredentials), status: 400, .invalidDPoPProof)
            let other = prover.proof(htm: "POST", htu: backend.dpopTokenURL, iat: clock.now, nonce: nonce, jti: "jti-2")
            #expect(try await dpopSend(backend, "/dpop/token", proofs: [other], body: clientCredentials).status == 200)
        }
    }

    @Test func aRequestWithNoOrTwoDPoPHeadersIsRefused() async throws {
        let clock = DPoPTestClock()
        try await withDPoPBackend(clock) { backend in
            let nonce = try await currentNonce(backend, clock)
            let prover = DPoPProver()
            func proof() -> String { prover.proof(htm: "POST", htu: backend.dpopTokenURL, iat: clock.now, nonce: nonce) }
            expectDPoPFailure(try await dpopSend(backend, "/dpop/token", proofs: [], body: clientCredentials), status: 400, .invalidDPoPProof)
            expectDPoPFailure(try await dpopSend(backend, "/dpop/token", proofs: [proof(), proof()], body: clientCredentials), status: 400, .invalidDPoPProof)
            #expect(try await dpopSend(backend, "/dpop/token", proofs: [proof()], body: clientCredentials).status == 200)
        }
    }

    @Test func aDPoPHeaderLongerThan8KiBIsRefusedAndOneJustShorterIsRead() async throws {
        let clock = DPoPTestClock()
        try await withDPoPBackend(clock) { backend in
            let nonce = try await currentNonce(backend, clock)
            let prover = DPoPProver()
            func padded(_ size: Int) -> String {
                prover.proof(
                    htm: "POST", htu: backend.dpopTokenURL, iat: clock.now, nonce: nonce,
                    tampering: .init(claims: ["pad": String(repeating: "p", count: size)])
                )
            }
            let long = padded(6_000)
            #expect(long.utf8.count > ReferenceBackend.maximumDPoPProofSize)
            expectDPoPFailure(try await dpopSend(backend, "/dpop/token", proofs: [long], body: clientCredentials), status: 400, .invalidDPoPProof)
            let short = padded(5_500)
            #expect(short.utf8.count <= ReferenceBackend.maximumDPoPProofSize)
            #expect(try await dpopSend(backend, "/dpop/token", proofs: [short], body: clientCredentials).status == 200)
            #expect(ReferenceBackend.maximumDPoPProofSize == 8192)
        }
    }

    // MARK: Resource

    @Test func theResourceRefusesAMissingOrWrongAth() async throws {
        let clock = DPoPTestClock()
        try await withDPoPBackend(clock) { backend in
            let prover = DPoPProver()
            let token = try await dpopToken(backend, clock, prover)
            let nonce = try await currentNonce(backend, clock)
            let challenge = #"DPoP error="invalid_dpop_proof", algs="ES256""#
            let missing = prover.proof(htm: "GET", htu: backend.dpopResourceURL, iat: clock.now, nonce: nonce)
            let wrong = prover.proof(htm: "GET", htu: backend.dpopResourceURL, iat: clock.now, nonce: nonce, accessToken: token + "x")
            for proof in [missing, wrong] {
                let answer = try await dpopSend(backend, "/dpop/resource", method: .get, authorization: "DPoP \(token)", proofs: [proof])
                expectDPoPFailure(answer, status: 401, .invalidDPoPProof, challenge: challenge)
                #expect(!answer.raw.contains(token))
            }
        }
    }

    @Test func theResourceRefusesAProofFromAnotherKeyThanTheTokenIsBoundTo() async throws {
        let clock = DPoPTestClock()
        try await withDPoPBackend(clock) { backend in
            let token = try await dpopToken(backend, clock, DPoPProver())
            let nonce = try await currentNonce(backend, clock)
            let thief = DPoPProver()
            let answer = try await dpopSend(
                backend, "/dpop/resource", method: .get, authorization: "DPoP \(token)",
                proofs: [thief.proof(htm: "GET", htu: backend.dpopResourceURL, iat: clock.now, nonce: nonce, accessToken: token)]
            )
            expectDPoPFailure(answer, status: 401, .invalidDPoPProof, challenge: #"DPoP error="invalid_dpop_proof", algs="ES256""#)
        }
    }

    @Test func theResourceChecksTheProofsMethodAndURLAndRefusesTwoProofs() async throws {
        let clock = DPoPTestClock()
        try await withDPoPBackend(clock) { backend in
            let prover = DPoPProver()
            let token = try await dpopToken(backend, clock, prover)
            let nonce = try await currentNonce(backend, clock)
            func proof(_ htm: String, _ htu: String) -> String {
                prover.proof(htm: htm, htu: htu, iat: clock.now, nonce: nonce, accessToken: token)
            }
            for proofs in [[proof("POST", backend.dpopResourceURL)], [proof("GET", backend.dpopTokenURL)],
                           [proof("GET", backend.dpopResourceURL), proof("GET", backend.dpopResourceURL)], []] {
                let answer = try await dpopSend(backend, "/dpop/resource", method: .get, authorization: "DPoP \(token)", proofs: proofs)
                expectDPoPFailure(answer, status: 401, .invalidDPoPProof)
            }
            let good = try await dpopSend(backend, "/dpop/resource", method: .get, authorization: "DPoP \(token)", proofs: [proof("GET", backend.dpopResourceURL)])
            #expect(good.status == 200, "answer was \(good.raw)")
        }
    }

    @Test func anExpiredTokenIsRefusedWithInvalidTokenBeforeTheProofIsLookedAt() async throws {
        let clock = DPoPTestClock()
        try await withDPoPBackend(clock) { backend in
            let prover = DPoPProver()
            let token = try await dpopToken(backend, clock, prover)
            let nonce = try await currentNonce(backend, clock)
            backend.expireDPoPTokens()
            let answer = try await dpopSend(
                backend, "/dpop/resource", method: .get, authorization: "DPoP \(token)",
                proofs: [prover.proof(htm: "GET", htu: backend.dpopResourceURL, iat: clock.now, nonce: nonce, accessToken: token)]
            )
            expectDPoPFailure(answer, status: 401, .invalidToken, challenge: #"DPoP error="invalid_token", algs="ES256""#)
            // Checked first: an expired token with no proof at all is still invalid_token.
            let noProof = try await dpopSend(backend, "/dpop/resource", method: .get, authorization: "DPoP \(token)")
            expectDPoPFailure(noProof, status: 401, .invalidToken)
        }
    }

    @Test func aTokenExpiresAfterTheConfiguredLifetimeOnTheServerClock() async throws {
        let clock = DPoPTestClock()
        try await withDPoPBackend(clock, lifetime: 120) { backend in
            let prover = DPoPProver()
            let token = try await dpopToken(backend, clock, prover)
            let nonce = try await currentNonce(backend, clock)
            func use() async throws -> DPoPAnswer {
                try await dpopSend(
                    backend, "/dpop/resource", method: .get, authorization: "DPoP \(token)",
                    proofs: [prover.proof(htm: "GET", htu: backend.dpopResourceURL, iat: clock.now, nonce: nonce, accessToken: token)]
                )
            }
            clock.advance(by: 119)
            #expect(try await use().status == 200)
            clock.advance(by: 1)
            expectDPoPFailure(try await use(), status: 401, .invalidToken)
        }
    }

    @Test func aMissingAuthorizationAnotherSchemeOrABearerDPoPTokenIsRefusedWithTheDPoPChallenge() async throws {
        let clock = DPoPTestClock()
        try await withDPoPBackend(clock) { backend in
            let prover = DPoPProver()
            let token = try await dpopToken(backend, clock, prover)
            let nonce = try await currentNonce(backend, clock)
            let proof = prover.proof(htm: "GET", htu: backend.dpopResourceURL, iat: clock.now, nonce: nonce, accessToken: token)
            for authorization in [nil, "Bearer \(token)", "Basic \(token)"] {
                let answer = try await dpopSend(backend, "/dpop/resource", method: .get, authorization: authorization, proofs: [proof])
                expectDPoPFailure(answer, status: 401, .invalidToken, challenge: #"DPoP algs="ES256""#)
                #expect(!answer.raw.contains(token))
            }
            // An unknown token under the right scheme names the error in the challenge.
            let unknown = try await dpopSend(backend, "/dpop/resource", method: .get, authorization: "DPoP not-issued", proofs: [proof])
            expectDPoPFailure(unknown, status: 401, .invalidToken, challenge: #"DPoP error="invalid_token", algs="ES256""#)
            // None of these spent the proof: it still works.
            let answer = try await dpopSend(backend, "/dpop/resource", method: .get, authorization: "DPoP \(token)", proofs: [proof])
            #expect(answer.status == 200, "answer was \(answer.raw)")
        }
    }

    @Test func theKeyIsCheckedBeforeTheNonce() async throws {
        let clock = DPoPTestClock()
        try await withDPoPBackend(clock) { backend in
            let token = try await dpopToken(backend, clock, DPoPProver())
            // Another key and no nonce: the key mismatch is reported, not the nonce.
            let answer = try await dpopSend(
                backend, "/dpop/resource", method: .get, authorization: "DPoP \(token)",
                proofs: [DPoPProver().proof(htm: "GET", htu: backend.dpopResourceURL, iat: clock.now, accessToken: token)]
            )
            expectDPoPFailure(answer, status: 401, .invalidDPoPProof)
            #expect(answer.nonce == nil)
        }
    }

    // MARK: Records and configuration

    @Test func dpopRequestsAreRecordedLikeTheOtherRoutes() async throws {
        let clock = DPoPTestClock()
        try await withDPoPBackend(clock) { backend in
            let prover = DPoPProver()
            let token = try await dpopToken(backend, clock, prover)
            _ = try await dpopSend(backend, "/dpop/resource", method: .get, authorization: "DPoP \(token)")
            let records = await backend.records()
            #expect(records.map(\.path) == ["/dpop/token", "/dpop/token", "/dpop/resource"])
            #expect(records.first?.body == clientCredentials)
            #expect(records.first?.headerNames.contains("dpop") == true)
            #expect(records.last?.authorization == "DPoP \(token)")
        }
    }

    @Test func aDPoPTokenLifetimeOutsideTheRangeDoesNotStart() async throws {
        for lifetime in [0, 86_401, .nan] as [TimeInterval] {
            await #expect(throws: ReferenceBackend.StartError.self) {
                try await ReferenceBackend.start(.init(dpopTokenLifetime: lifetime))
            }
        }
    }

    @Test func theDPoPErrorCodesAreTheOAuthOnes() {
        #expect(ReferenceBackend.DPoPErrorCode.allCases.map(\.rawValue) == [
            "invalid_request", "unsupported_grant_type", "invalid_client", "invalid_dpop_proof", "use_dpop_nonce", "invalid_token",
        ])
    }
}
