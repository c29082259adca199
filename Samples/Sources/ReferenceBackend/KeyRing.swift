import Crypto
import CryptoExtras
import Foundation
import JWTKit
import Synchronization

/// Why a bearer token was refused: the error code and a human-readable message.
struct AuthFailure: Error, Sendable {
    var code: ReferenceBackend.ErrorCode
    var message: String
}

/// A token that passed verification.
struct VerifiedToken: Sendable {
    var subject: String?
    var claims: [String: JSONValue]
}

/// The app server's signing keys and the vendor's trusted public keys.
///
/// Tokens are built and signed here with swift-crypto (so minting is synchronous); verification
/// goes through JWTKit, one key collection per trusted public key.
final class KeyRing: Sendable {
    /// How many public keys an app may have at once; the oldest beyond this is dropped.
    static let maximumTrustedKeys = 3

    struct TrustedKey: Sendable {
        var kid: String
        var privateKey: _RSA.Signing.PrivateKey
        var verifier: JWTKeyCollection
    }

    private struct State: Sendable {
        var keys: [TrustedKey]
        var generatedCount: Int
        var untrustedKey: _RSA.Signing.PrivateKey?
    }

    private let state: Mutex<State>
    /// The secret that signs the `wrongAlgorithm` variant (HS256). The backend never accepts it.
    private let hmacSecret = SymmetricKey(data: Data("reference-backend-hs256-secret-never-trusted".utf8))

    private init(first: TrustedKey) {
        state = Mutex(State(keys: [first], generatedCount: 1, untrustedKey: nil))
    }

    static func make() async throws -> KeyRing {
        KeyRing(first: try await makeTrustedKey(kid: "rb-key-1"))
    }

    private static func makeTrustedKey(kid: String) async throws -> TrustedKey {
        let privateKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let verifier = JWTKeyCollection()
        let publicKey = try Insecure.RSA.PublicKey(backing: privateKey.publicKey)
        await verifier.add(rsa: publicKey, digestAlgorithm: .sha256, kid: JWKIdentifier(string: kid))
        return TrustedKey(kid: kid, privateKey: privateKey, verifier: verifier)
    }

    /// The key IDs of the trusted keys, oldest first; the last one signs new tokens.
    var trustedKeyIDs: [String] {
        state.withLock { $0.keys.map(\.kid) }
    }

    /// Adds a new key, signs with it from now on, and drops the oldest beyond ``maximumTrustedKeys``.
    @discardableResult
    func rotate() async throws -> String {
        let kid = state.withLock { state -> String in
            state.generatedCount += 1
            return "rb-key-\(state.generatedCount)"
        }
        let key = try await Self.makeTrustedKey(kid: kid)
        state.withLock { state in
            state.keys.append(key)
            if state.keys.count > Self.maximumTrustedKeys {
                state.keys.removeFirst(state.keys.count - Self.maximumTrustedKeys)
            }
        }
        return kid
    }

    // MARK: Minting

    /// Mints a token of the given variant. Standard claims win over `claims` of the same name.
    ///
    /// - Throws: ``ReferenceBackend/TokenLifetimeError`` when `lifetime` is outside
    ///   ``ReferenceBackend/tokenLifetimeRange`` (so `exp` and `iat` stay small whole numbers).
    func mint(
        userId: String,
        variant: TokenVariant,
        lifetime: TimeInterval,
        audience: String?,
        issuer: String?,
        claims: [String: String],
        now: Date = Date()
    ) throws -> (token: String, expiresAt: Date?) {
        guard ReferenceBackend.tokenLifetimeRange.contains(lifetime) else {
            throw ReferenceBackend.TokenLifetimeError(lifetime: lifetime)
        }
        let issuedAt = now.timeIntervalSince1970.rounded(.down)
        var payload: [String: JSONValue] = claims.mapValues { .string($0) }
        payload["sub"] = .string(variant == .otherSubject ? userId + "-other" : userId)
        payload["iat"] = .number(issuedAt)
        var expiresAt: Date?
        switch variant {
        case .missingExp:
            break
        case .expired:
            payload["iat"] = .number(issuedAt - lifetime - 60)
            expiresAt = Date(timeIntervalSince1970: issuedAt - 60)
        default:
            expiresAt = Date(timeIntervalSince1970: issuedAt + lifetime.rounded(.down))
        }
        if let expiresAt { payload["exp"] = .number(expiresAt.timeIntervalSince1970) }
        if let audience { payload["aud"] = .string(audience) }
        if let issuer { payload["iss"] = .string(issuer) }

        let currentKey = state.withLock { $0.keys.last }
        guard let currentKey else { throw AuthFailure(code: .invalidSignature, message: "No signing key.") }

        let token: String
        switch variant {
        case .wrongAlgorithm:
            let signingInput = try Self.signingInput(alg: "HS256", kid: currentKey.kid, payload: payload)
            let mac = HMAC<SHA256>.authenticationCode(for: Data(signingInput.utf8), using: hmacSecret)
            token = signingInput + "." + Base64URL.encode(Data(mac))
        case .wrongKey:
            token = try Self.signRS256(payload: payload, kid: "untrusted-key", key: try untrustedKey())
        default:
            token = try Self.signRS256(payload: payload, kid: currentKey.kid, key: currentKey.privateKey)
        }
        return (token, expiresAt)
    }

    private func untrustedKey() throws -> _RSA.Signing.PrivateKey {
        if let key = state.withLock({ $0.untrustedKey }) { return key }
        let generated = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        return state.withLock { state in
            if let existing = state.untrustedKey { return existing }
            state.untrustedKey = generated
            return generated
        }
    }

    static func signingInput(alg: String, kid: String?, payload: [String: JSONValue]) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try signingInput(alg: alg, kid: kid, payloadJSON: encoder.encode(payload.mapValues(Self.integral)))
    }

    /// `base64url(header) + "." + base64url(payloadJSON)`; the header has `alg`, `typ` and `kid` when given.
    static func signingInput(alg: String, kid: String?, payloadJSON: Data) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var header: [String: String] = ["alg": alg, "typ": "JWT"]
        header["kid"] = kid
        return Base64URL.encode(try encoder.encode(header)) + "." + Base64URL.encode(payloadJSON)
    }

    /// Encodes whole numbers as integers so `exp`/`iat` read as `1700000000`, not `1700000000.0`.
    private static func integral(_ value: JSONValue) -> IntegralJSON { IntegralJSON(value: value) }

    static func signRS256(payload: [String: JSONValue], kid: String?, key: _RSA.Signing.PrivateKey) throws -> String {
        try signRS256(signingInput: signingInput(alg: "RS256", kid: kid, payload: payload), key: key)
    }

    /// `signingInput + "." + base64url(RS256 signature of signingInput)`.
    static func signRS256(signingInput: String, key: _RSA.Signing.PrivateKey) throws -> String {
        let signature = try key.signature(for: SHA256.hash(data: Data(signingInput.utf8)), padding: .insecurePKCS1v1_5)
        return signingInput + "." + Base64URL.encode(signature.rawRepresentation)
    }

    // MARK: Verification

    /// A public key that verifies RS256 signatures, with its `kid` when it has one.
    struct VerificationKey: Sendable {
        var kid: String?
        var verifier: JWTKeyCollection
    }

    /// The trusted public keys now, oldest first.
    var verificationKeys: [VerificationKey] {
        state.withLock { $0.keys.map { VerificationKey(kid: $0.kid, verifier: $0.verifier) } }
    }

    /// A verifier for one RSA public key given in PEM, without a `kid`.
    ///
    /// - Throws: When `pem` is not an RSA public key of at least 2048 bits.
    static func verificationKey(pem: String) async throws -> VerificationKey {
        let publicKey = try Insecure.RSA.PublicKey(pem: pem)
        let verifier = JWTKeyCollection()
        await verifier.add(rsa: publicKey, digestAlgorithm: .sha256)
        return VerificationKey(kid: nil, verifier: verifier)
    }

    /// Whether one of `keys` verifies the RS256 signature of `token` (JWTKit checks it; no claim
    /// is read). The key whose `kid` matches comes first, then every other key: at most
    /// ``maximumTrustedKeys`` RSA verifications.
    static func signatureVerifies(_ token: String, kid: String?, keys: [VerificationKey]) async -> Bool {
        let candidates = keys.filter { $0.kid == kid } + keys.filter { $0.kid != kid }
        for key in candidates where (try? await key.verifier.verify(token, as: SignatureOnlyPayload.self)) != nil {
            return true
        }
        return false
    }

    /// Whole seconds as digits, or the number as is when it has no `Int64` value: `exp` may be any
    /// finite JSON number, and `Int(_:)` traps outside `Int`'s range.
    static func seconds(_ value: Double) -> String {
        if let whole = Int64(exactly: value.rounded(.down)) { return String(whole) }
        return String(value)
    }

    /// The JSON header and payload of a compact JWT (three `.`-separated base64url parts), read with
    /// the bounded parser (nesting at most ``ReferenceBackend/maximumTokenJSONDepth`` levels, no
    /// repeated keys), and its signature part undecoded; `nil` for anything else.
    static func decodeCompact(_ token: String) -> (header: [String: JSONValue], claims: [String: JSONValue], signaturePart: Substring)? {
        let depth = ReferenceBackend.maximumTokenJSONDepth
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
            let headerData = Base64URL.decode(parts[0]),
            let header = JSONValue.object(from: headerData, maximumDepth: depth),
            let payloadData = Base64URL.decode(parts[1]),
            let claims = JSONValue.object(from: payloadData, maximumDepth: depth)
        else { return nil }
        return (header, claims, parts[2])
    }

    /// Verifies a bearer JWT: size (at most ``ReferenceBackend/maximumAuthorizationHeaderSize``
    /// bytes, checked before any decoding), shape (JSON header and payload read in one linear pass,
    /// nesting at most ``ReferenceBackend/maximumTokenJSONDepth`` levels), `alg` (RS256 only),
    /// signature against the trusted keys, `exp`, then `aud` and `iss` when expected values are given.
    func verify(_ token: String, audience: String?, issuer: String?, now: Date = Date()) async -> Result<VerifiedToken, AuthFailure> {
        guard token.utf8.count <= ReferenceBackend.maximumAuthorizationHeaderSize else {
            return .failure(AuthFailure(
                code: .tokenTooLarge,
                message: "The bearer token is longer than \(ReferenceBackend.maximumAuthorizationHeaderSize) bytes."
            ))
        }
        let depth = ReferenceBackend.maximumTokenJSONDepth
        guard let (header, claims, _) = Self.decodeCompact(token) else {
            return .failure(AuthFailure(
                code: .malformedToken,
                message: "The bearer token is not a JWT with a JSON header and payload (nesting at most \(depth) levels, no repeated keys)."
            ))
        }
        guard let alg = header["alg"]?.stringValue, alg == "RS256" else {
            let shown = header["alg"]?.stringValue.map { $0.count <= 16 ? $0 : $0.prefix(16) + "…" } ?? "none"
            return .failure(AuthFailure(code: .unsupportedAlgorithm, message: "Algorithm \(shown) is not accepted; tokens must be signed with RS256."))
        }

        guard await Self.signatureVerifies(token, kid: header["kid"]?.stringValue, keys: verificationKeys) else {
            return .failure(AuthFailure(code: .invalidSignature, message: "The token signature does not match any trusted public key."))
        }

        guard let expClaim = claims["exp"], expClaim != .null else {
            return .failure(AuthFailure(code: .missingExp, message: "The token has no exp claim; an expiration is required."))
        }
        guard let exp = expClaim.numberValue else {
            return .failure(AuthFailure(code: .malformedToken, message: "The token exp claim is not a number."))
        }
        guard exp > now.timeIntervalSince1970 else {
            let message = "The token expired at \(Self.seconds(exp)) (now \(Self.seconds(now.timeIntervalSince1970)))."
            return .failure(AuthFailure(code: .tokenExpired, message: message))
        }
        if let audience {
            let audiences: [String] =
                switch claims["aud"] {
                case .string(let value): [value]
                case .array(let values): values.compactMap(\.stringValue)
                default: []
                }
            guard audiences.contains(audience) else {
                return .failure(AuthFailure(code: .invalidAudience, message: "The token audience does not include \(audience)."))
            }
        }
        if let issuer, claims["iss"]?.stringValue != issuer {
            return .failure(AuthFailure(code: .invalidIssuer, message: "The token issuer is not \(issuer)."))
        }
        return .success(VerifiedToken(subject: claims["sub"]?.stringValue, claims: claims))
    }
}

/// A payload that JWTKit decodes without reading any claim: the backend only asks JWTKit to
/// check the signature and reads the claims itself, to answer with precise error codes.
private struct SignatureOnlyPayload: JWTPayload {
    init() {}
    init(from decoder: any Decoder) throws {}
    func encode(to encoder: any Encoder) throws {}
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// Encodes a ``JSONValue``, writing whole numbers as integers.
private struct IntegralJSON: Encodable {
    var value: JSONValue

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch value {
        case .number(let number) where number.rounded() == number && abs(number) < 9e15:
            try container.encode(Int64(number))
        case .array(let values):
            try container.encode(values.map(IntegralJSON.init))
        case .object(let values):
            try container.encode(values.mapValues(IntegralJSON.init))
        default:
            try container.encode(value)
        }
    }
}
