import Crypto
import Foundation
import Hummingbird
import Synchronization

// The DPoP role (RFC 9449, proof of possession), an OAuth authorization server and resource server:
//   POST /dpop/token     grant_type=client_credentials&client_id=<id>, DPoP: <proof>
//        -> 200 {"access_token": "...", "token_type": "DPoP", "expires_in": <seconds>}, DPoP-Nonce: <nonce>
//   GET  /dpop/resource  Authorization: DPoP <access token>, DPoP: <proof with ath>   (POST too)
//        -> 200 {"success": true, "subject": "<client_id>", "jkt": "<thumbprint>"}, DPoP-Nonce: <nonce>
// Failures answer {"error": "<DPoPErrorCode>", "error_description": "..."}; see ReferenceBackend's
// "DPoP" section for the statuses and headers.

extension ReferenceBackend {
    /// The OAuth `"error"` codes of the DPoP routes, answered in
    /// `{"error": "<code>", "error_description": "<human text>"}` (RFC 6749 §5.2, RFC 9449).
    ///
    /// Unlike ``ErrorCode`` a code has no single status: `POST /dpop/token` answers its failures
    /// with `400`, `GET /dpop/resource` with `401` and a `WWW-Authenticate: DPoP ...` header.
    public enum DPoPErrorCode: String, CaseIterable, Sendable, Codable {
        /// `POST /dpop/token`, 400: the body is not `application/x-www-form-urlencoded` (a bad
        /// percent escape, invalid UTF-8, a parameter given twice).
        case invalidRequest = "invalid_request"
        /// `POST /dpop/token`, 400: `grant_type` is missing or not `client_credentials`.
        case unsupportedGrantType = "unsupported_grant_type"
        /// `POST /dpop/token`, 400: `client_id` is missing or not in ``Configuration/dpopClientIDs``.
        case invalidClient = "invalid_client"
        /// 400 on `POST /dpop/token`, 401 on `/dpop/resource`: the `DPoP` proof is missing,
        /// repeated, malformed, badly signed, replayed, has wrong claims, or (on the resource) was
        /// made with another key than the one the access token is bound to.
        case invalidDPoPProof = "invalid_dpop_proof"
        /// 400 on `POST /dpop/token`, 401 on `/dpop/resource`: the proof has no `nonce` or not the
        /// current one; the answer's `DPoP-Nonce` header gives the current nonce to retry with.
        case useDPoPNonce = "use_dpop_nonce"
        /// `/dpop/resource`, 401: no `Authorization: DPoP <token>` (missing, another scheme such as
        /// `Bearer`, longer than ``ReferenceBackend/maximumAuthorizationHeaderSize`` bytes, or
        /// given twice), or a token `/dpop/token` did not issue or that has expired.
        case invalidToken = "invalid_token"
    }

    /// The longest `DPoP` header value accepted, in bytes (8 KiB); longer proofs are refused
    /// before any decoding.
    public static let maximumDPoPProofSize = 8192
    /// How far a DPoP proof's `iat` may lie before or after ``Configuration/now``, in seconds.
    public static let dpopProofClockSkew: TimeInterval = 60
    /// How many DPoP proof `jti`s are remembered to refuse replays. Each is kept for twice
    /// ``dpopProofClockSkew`` (any proof it could belong to is refused for its `iat` after that);
    /// while a client's part of the cache is full of live entries its new proofs are refused rather
    /// than forgetting one. Per client (the `client_id`, or the access token's subject): one client
    /// cannot fill another's.
    public static let dpopReplayCacheCapacity = 10_000
    /// The longest `jti` a DPoP proof may carry, in characters.
    public static let maximumDPoPJTILength = 256

    /// Makes a new DPoP nonce current: proofs carrying the previous one are answered with
    /// `use_dpop_nonce` and the new nonce in `DPoP-Nonce`, so demos and tests see a rotation
    /// without waiting.
    public func rotateDPoPNonce() {
        dpop.nonce.rotate()
    }

    /// Makes every access token `/dpop/token` has issued expired, so tests and samples see an
    /// expiry without waiting: `/dpop/resource` then answers `401 invalid_token`.
    public func expireDPoPTokens() {
        dpop.tokens.expireAll()
    }

    /// The RFC 7638 thumbprint of an EC P-256 public key given by its base64url coordinates:
    /// base64url(SHA-256(`{"crv":"P-256","kty":"EC","x":"<x>","y":"<y>"}`)).
    static func dpopThumbprint(x: String, y: String) -> String {
        let canonical = #"{"crv":"P-256","kty":"EC","x":"\#(x)","y":"\#(y)"}"#
        return Base64URL.encode(Data(SHA256.hash(data: Data(canonical.utf8))))
    }
}

// MARK: - State

/// The DPoP role's server state: issued tokens, the current nonce, the seen `jti`s, and the port
/// the server really bound (known once it listens), for the endpoints' own URLs.
final class DPoPState: Sendable {
    let tokens = DPoPTokenLedger()
    let nonce = DPoPNonce()
    let replays = DPoPReplayCache()
    private let boundPort = Mutex(0)

    var port: Int {
        get { boundPort.withLock { $0 } }
        set { boundPort.withLock { $0 = newValue } }
    }
}

/// The access tokens `/dpop/token` issued: token -> subject, bound key thumbprint and expiry.
/// At most ``capacity`` live ones per subject (a registered client), as for ``ExchangeLedger``:
/// a client that asks for token after token evicts only its own, never another client's.
final class DPoPTokenLedger: Sendable {
    struct Entry: Sendable { let subject: String; let jkt: String; let expiresAt: Date }
    private let entries = Mutex<[String: Entry]>([:])
    private let issuedPerSubject = Mutex<[String: Int]>([:])
    /// Live tokens one subject may hold.
    let capacity: Int
    static let capacity = 10_000

    init(capacity: Int = DPoPTokenLedger.capacity) {
        self.capacity = capacity
    }

    /// Issues a random 256-bit token for `subject`, bound to the key with thumbprint `jkt`.
    func issue(subject: String, jkt: String, lifetime: TimeInterval, now: Date) -> String {
        let token = Base64URL.encode(SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) })
        entries.withLock { entries in
            var own = entries.filter { $0.value.subject == subject }
            if own.count >= capacity {
                for (key, entry) in own where entry.expiresAt <= now { entries[key] = nil; own[key] = nil }
            }
            if own.count >= capacity, let oldest = own.min(by: { $0.value.expiresAt < $1.value.expiresAt })?.key {
                entries[oldest] = nil
            }
            entries[token] = Entry(subject: subject, jkt: jkt, expiresAt: now.addingTimeInterval(lifetime))
        }
        return token
    }

    enum Lookup { case valid(Entry), expired, unknown }

    func look(_ token: String, now: Date) -> Lookup {
        guard let entry = entries.withLock({ $0[token] }) else { return .unknown }
        return entry.expiresAt > now ? .valid(entry) : .expired
    }

    /// Makes every issued token expired.
    func expireAll() {
        entries.withLock { entries in
            entries = entries.mapValues { Entry(subject: $0.subject, jkt: $0.jkt, expiresAt: .distantPast) }
        }
    }
}

/// The server's current DPoP nonce: base64url of 32 random bytes.
final class DPoPNonce: Sendable {
    private let value = Mutex(DPoPNonce.make())

    var current: String { value.withLock { $0 } }

    func rotate() {
        value.withLock { $0 = Self.make() }
    }

    private static func make() -> String {
        Base64URL.encode(SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) })
    }
}

/// The `jti`s of accepted proofs, each kept until the end of the window in which a proof
/// carrying it could still be accepted: at most ``capacity`` per client (the `client_id` a token
/// request names, or the subject of the access token a resource request carries). A client that
/// sends proof after proof fills only its own part: the other clients' proofs are still admitted.
final class DPoPReplayCache: Sendable {
    private let seen = Mutex<[String: [String: Date]]>([:])
    /// `jti`s remembered for one client.
    let capacity: Int

    init(capacity: Int = ReferenceBackend.dpopReplayCacheCapacity) {
        self.capacity = capacity
    }

    enum Admission { case admitted, replayed, full }

    /// Admits `jti` for `client` unless it was seen and is still remembered, or the client's part
    /// is full of live entries.
    func admit(_ jti: String, client: String, now: Date) -> Admission {
        seen.withLock { seen in
            var own = seen[client, default: [:]]
            defer { seen[client] = own.isEmpty ? nil : own }
            if let until = own[jti], until > now { return .replayed }
            if own.count >= capacity { own = own.filter { $0.value > now } }
            guard own.count < capacity else { return .full }
            own[jti] = now.addingTimeInterval(2 * ReferenceBackend.dpopProofClockSkew)
            return .admitted
        }
    }
}

// MARK: - Routes

extension HTTPFields.Element.Name {
    /// `DPoP`: the proof JWT (RFC 9449 §4.1).
    static let dpop = Self("DPoP")!
    /// `DPoP-Nonce`: the nonce the server wants in the next proofs (RFC 9449 §8).
    static let dpopNonce = Self("DPoP-Nonce")!
}

/// A DPoP proof that passed verification.
struct VerifiedDPoPProof {
    /// The RFC 7638 thumbprint of the proof's key.
    var jkt: String
    /// The `nonce` claim, when present.
    var nonce: String?
}

/// Why a DPoP request was refused (the code and an `error_description` that quotes no secret).
struct DPoPFailure: Error {
    var code: ReferenceBackend.DPoPErrorCode
    var description: String
}

extension Routes {
    static let dpopTokenPath = "/dpop/token"
    static let dpopResourcePath = "/dpop/resource"

    func registerDPoP(on router: Router<BasicRequestContext>) {
        router.post(RouterPath(Self.dpopTokenPath)) { request, _ in try await self.dpopToken(request) }
        router.get(RouterPath(Self.dpopResourcePath)) { request, _ in try await self.dpopResource(request) }
        router.post(RouterPath(Self.dpopResourcePath)) { request, _ in try await self.dpopResource(request) }
    }

    // MARK: Token endpoint

    private func dpopToken(_ request: Request) async throws -> Response {
        guard case .success(let body) = try await record(request) else { return Self.bodyTooLarge() }
        func refuse(_ code: ReferenceBackend.DPoPErrorCode, _ description: String, _ headers: HTTPFields = [:]) -> Response {
            Self.dpopFailure(.badRequest, DPoPFailure(code: code, description: description), headers: headers)
        }
        guard let form = Self.formFields(body) else {
            return refuse(.invalidRequest, "The body must be application/x-www-form-urlencoded, each parameter at most once.")
        }
        guard form["grant_type"] == "client_credentials" else {
            return refuse(.unsupportedGrantType, "Only grant_type=client_credentials is supported.")
        }
        guard let clientID = form["client_id"], configuration.dpopClientIDs.contains(clientID) else {
            return refuse(.invalidClient, "The client_id is missing or not a registered client.")
        }
        let now = configuration.now()
        let proof: VerifiedDPoPProof
        switch verifyDPoPProof(request, path: Self.dpopTokenPath, accessToken: nil, client: clientID, now: now) {
        case .failure(let failure): return Self.dpopFailure(.badRequest, failure)
        case .success(let value): proof = value
        }
        let nonce = dpop.nonce.current
        guard proof.nonce == nonce else {
            return refuse(.useDPoPNonce, "Authorization server requires nonce in DPoP proof.", [.dpopNonce: nonce])
        }
        let lifetime = configuration.dpopTokenLifetime
        let token = dpop.tokens.issue(subject: clientID, jkt: proof.jkt, lifetime: lifetime, now: now)
        var response = try Self.json(.ok, DPoPTokenAnswer(accessToken: token, tokenType: "DPoP", expiresIn: Int(lifetime)))
        response.headers[.dpopNonce] = nonce
        response.headers[.cacheControl] = "no-store"
        return response
    }

    // MARK: Resource

    private func dpopResource(_ request: Request) async throws -> Response {
        guard case .success = try await record(request) else { return Self.bodyTooLarge() }
        let challenge = #"DPoP algs="ES256""#
        func refuse(_ code: ReferenceBackend.DPoPErrorCode, _ description: String, challenge: String) -> Response {
            Self.dpopFailure(.unauthorized, DPoPFailure(code: code, description: description), headers: [.wwwAuthenticate: challenge])
        }
        func refuse(_ failure: DPoPFailure) -> Response {
            refuse(failure.code, failure.description, challenge: #"DPoP error="\#(failure.code.rawValue)", algs="ES256""#)
        }

        // The credential: exactly one `Authorization: DPoP <token>`.
        let authorizations = request.headers[values: .authorization]
        guard let header = authorizations.first else {
            return refuse(.invalidToken, "The request has no Authorization header; send Authorization: DPoP <access token>.", challenge: challenge)
        }
        guard authorizations.count == 1, header.utf8.count <= ReferenceBackend.maximumAuthorizationHeaderSize else {
            return refuse(DPoPFailure(
                code: .invalidToken,
                description: "The request must have one Authorization header of at most \(ReferenceBackend.maximumAuthorizationHeaderSize) bytes."
            ))
        }
        let scheme = header.prefix { $0 != " " }
        guard scheme.lowercased() == "dpop" else {
            let description = scheme.lowercased() == "bearer"
                ? "The access token is DPoP-bound: send it as Authorization: DPoP <access token> with a DPoP proof."
                : "Only the DPoP authorization scheme is accepted here."
            return refuse(.invalidToken, description, challenge: challenge)
        }
        let token = header.dropFirst(scheme.count).trimmingCharacters(in: .whitespaces)

        let now = configuration.now()
        let bound: DPoPTokenLedger.Entry
        switch dpop.tokens.look(token, now: now) {
        case .unknown: return refuse(DPoPFailure(code: .invalidToken, description: "The access token was not issued by /dpop/token."))
        case .expired: return refuse(DPoPFailure(code: .invalidToken, description: "The access token has expired; request a new one."))
        case .valid(let entry): bound = entry
        }
        let proof: VerifiedDPoPProof
        switch verifyDPoPProof(request, path: Self.dpopResourcePath, accessToken: token, client: bound.subject, now: now) {
        case .failure(let failure): return refuse(failure)
        case .success(let value): proof = value
        }
        guard proof.jkt == bound.jkt else {
            return refuse(DPoPFailure(code: .invalidDPoPProof, description: "The DPoP proof was made with another key than the one the access token is bound to."))
        }
        let nonce = dpop.nonce.current
        guard proof.nonce == nonce else {
            let description = "Resource server requires nonce in DPoP proof"
            var response = refuse(
                .useDPoPNonce, description + ".",
                challenge: #"DPoP error="use_dpop_nonce", error_description="\#(description)", algs="ES256""#
            )
            response.headers[.dpopNonce] = nonce
            return response
        }
        var response = try Self.json(.ok, DPoPResourceAnswer(success: true, subject: bound.subject, jkt: bound.jkt))
        response.headers[.dpopNonce] = nonce
        return response
    }

    // MARK: Proof verification

    /// Verifies the request's one `DPoP` proof (RFC 9449 §4.3) for this request's method and
    /// `path` on this server, with `ath` required for `accessToken` when it is not `nil`, and
    /// remembers its `jti` among `client`'s. The nonce is returned, not checked: the caller checks it last.
    func verifyDPoPProof(_ request: Request, path: String, accessToken: String?, client: String, now: Date) -> Result<VerifiedDPoPProof, DPoPFailure> {
        func fail(_ description: String) -> Result<VerifiedDPoPProof, DPoPFailure> {
            .failure(DPoPFailure(code: .invalidDPoPProof, description: description))
        }
        let values = request.headers[values: .dpop]
        guard let proof = values.first else { return fail("The request has no DPoP header.") }
        guard values.count == 1 else { return fail("The request has more than one DPoP header.") }
        guard proof.utf8.count <= ReferenceBackend.maximumDPoPProofSize else {
            return fail("The DPoP header is longer than \(ReferenceBackend.maximumDPoPProofSize) bytes.")
        }

        // Structure: a compact JWS with JSON object header and payload.
        let parts = proof.split(separator: ".", omittingEmptySubsequences: false)
        let depth = ReferenceBackend.maximumTokenJSONDepth
        guard parts.count == 3,
              let headerData = Base64URL.decode(parts[0]), let header = JSONValue.object(from: headerData, maximumDepth: depth),
              let payloadData = Base64URL.decode(parts[1]), let claims = JSONValue.object(from: payloadData, maximumDepth: depth),
              let signature = Base64URL.decode(parts[2])
        else {
            return fail("The DPoP proof is not a compact JWS with a JSON object header and payload.")
        }

        // JOSE header.
        guard header["typ"] == JSONValue.string("dpop+jwt") else { return fail("The DPoP proof's typ must be dpop+jwt.") }
        guard header["alg"] == JSONValue.string("ES256") else { return fail("The DPoP proof's alg must be ES256.") }
        guard header["crit"] == nil else { return fail("The DPoP proof names critical header parameters this server does not understand.") }
        guard let jwk = header["jwk"]?.objectValue else { return fail("The DPoP proof's header has no jwk object.") }
        guard jwk["d"] == nil else { return fail("The DPoP proof's jwk contains a private key.") }
        guard jwk["kty"] == JSONValue.string("EC"), jwk["crv"] == JSONValue.string("P-256"),
              let x = jwk["x"]?.stringValue, let y = jwk["y"]?.stringValue,
              let xBytes = Self.canonicalCoordinate(x), let yBytes = Self.canonicalCoordinate(y),
              let key = try? P256.Signing.PublicKey(rawRepresentation: xBytes + yBytes)
        else {
            return fail("The DPoP proof's jwk is not an EC P-256 public key with 32-byte base64url x and y.")
        }

        // Signature: ES256, raw r || s.
        let signingInput = Data(proof.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        guard signature.count == 64,
              let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature),
              key.isValidSignature(ecdsa, for: signingInput)
        else {
            return fail("The DPoP proof's signature does not verify with its jwk.")
        }

        // Claims.
        guard let jti = claims["jti"]?.stringValue, (1...ReferenceBackend.maximumDPoPJTILength).contains(jti.count) else {
            return fail("The DPoP proof's jti must be a string of 1 to \(ReferenceBackend.maximumDPoPJTILength) characters.")
        }
        let method = request.method.rawValue
        guard claims["htm"] == JSONValue.string(method) else { return fail("The DPoP proof's htm must be \(method).") }
        guard let htu = claims["htu"]?.stringValue, let proofURL = Self.normalizedHTU(htu),
              acceptedHTUs(request, path: path).contains(proofURL)
        else {
            return fail("The DPoP proof's htu must be this endpoint's URL, \(baseURLString(path)).")
        }
        let skew = ReferenceBackend.dpopProofClockSkew
        guard let issuedAt = claims["iat"]?.numberValue, abs(issuedAt - now.timeIntervalSince1970) <= skew else {
            return fail("The DPoP proof's iat must be a number of seconds within \(Int(skew)) s of the server's time.")
        }
        if let accessToken {
            let expected = Base64URL.encode(Data(SHA256.hash(data: Data(accessToken.utf8))))
            guard claims["ath"] == JSONValue.string(expected) else {
                return fail("The DPoP proof's ath must be the base64url SHA-256 hash of the access token.")
            }
        }
        let nonce: String?
        switch claims["nonce"] {
        case nil: nonce = nil
        case .string(let value): nonce = value
        default: return fail("The DPoP proof's nonce must be a string.")
        }
        // Last, so that a refused proof does not take a place in the cache.
        switch dpop.replays.admit(jti, client: client, now: now) {
        case .replayed: return fail("The DPoP proof's jti was already used.")
        case .full: return fail("Too many DPoP proofs were seen recently; retry later.")
        case .admitted: break
        }
        return .success(VerifiedDPoPProof(jkt: ReferenceBackend.dpopThumbprint(x: x, y: y), nonce: nonce))
    }

    /// The 32 bytes a base64url coordinate spells, when it is exactly their canonical unpadded
    /// encoding (so that one key has one thumbprint).
    static func canonicalCoordinate(_ text: String) -> Data? {
        guard text.utf8.count == 43, let bytes = Base64URL.decode(text), bytes.count == 32, Base64URL.encode(bytes) == text else { return nil }
        return bytes
    }

    /// `scheme://host[:port]path` of an `htu`: scheme and host lowercased, the default port
    /// dropped, query and fragment dropped; `nil` when it is not an absolute http(s) URL with a
    /// host and without user info.
    static func normalizedHTU(_ text: String) -> String? {
        guard text.utf8.count <= ReferenceBackend.maximumDPoPProofSize,
              let components = URLComponents(string: text),
              let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = components.percentEncodedHost?.lowercased(), !host.isEmpty,
              components.percentEncodedUser == nil, components.percentEncodedPassword == nil
        else { return nil }
        let hostPart = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        let port = components.port.flatMap { port in (scheme == "http" && port == 80) || (scheme == "https" && port == 443) ? nil : port }
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        return "\(scheme)://\(hostPart)\(port.map { ":\($0)" } ?? "")\(path)"
    }

    /// The endpoint's URL on ``ReferenceBackend/baseURL`` and, when the request names a host, on
    /// that host (a client may reach a loopback server as `localhost` or by its address), normalized.
    private func acceptedHTUs(_ request: Request, path: String) -> Set<String> {
        var accepted: Set<String> = []
        if let own = Self.normalizedHTU(baseURLString(path)) { accepted.insert(own) }
        if let authority = request.head.authority, let named = Self.normalizedHTU("http://\(authority)\(path)") {
            accepted.insert(named)
        }
        return accepted
    }

    private func baseURLString(_ path: String) -> String {
        let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        return "http://\(host):\(dpop.port)\(path)"
    }

    // MARK: Form and answers

    /// The parameters of an `application/x-www-form-urlencoded` body (`+` is a space, `%XX` a
    /// byte, the result UTF-8); `nil` when an escape is bad, the text is not UTF-8, or a name
    /// repeats (RFC 6749 §3.2). One linear pass.
    static func formFields(_ body: Data) -> [String: String]? {
        func decode(_ bytes: ArraySlice<UInt8>) -> String? {
            var decoded: [UInt8] = []
            decoded.reserveCapacity(bytes.count)
            var index = bytes.startIndex
            while index < bytes.endIndex {
                let byte = bytes[index]
                if byte == UInt8(ascii: "%") {
                    guard index + 2 < bytes.endIndex,
                          let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2])
                    else { return nil }
                    decoded.append(high << 4 | low)
                    index += 3
                } else {
                    decoded.append(byte == UInt8(ascii: "+") ? 0x20 : byte)
                    index += 1
                }
            }
            return String(validating: decoded, as: UTF8.self)
        }
        func hexValue(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var fields: [String: String] = [:]
        for pair in Array(body).split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let separator = pair.firstIndex(of: UInt8(ascii: "=")) ?? pair.endIndex
            guard let name = decode(pair[pair.startIndex..<separator]),
                  let value = decode(separator == pair.endIndex ? [] : pair[(separator + 1)...]),
                  fields.updateValue(value, forKey: name) == nil
            else { return nil }
        }
        return fields
    }

    static func dpopFailure(_ status: HTTPResponse.Status, _ failure: DPoPFailure, headers: HTTPFields = [:]) -> Response {
        var response: Response
        do {
            response = try json(status, DPoPErrorAnswer(error: failure.code.rawValue, errorDescription: failure.description))
        } catch {
            response = Response(status: status)
        }
        response.headers.append(contentsOf: headers)
        return response
    }
}

struct DPoPErrorAnswer: Encodable {
    let error: String
    let errorDescription: String
    private enum CodingKeys: String, CodingKey { case error, errorDescription = "error_description" }
}

struct DPoPTokenAnswer: Encodable {
    let accessToken: String
    let tokenType: String
    let expiresIn: Int
    private enum CodingKeys: String, CodingKey { case accessToken = "access_token", tokenType = "token_type", expiresIn = "expires_in" }
}

struct DPoPResourceAnswer: Encodable {
    let success: Bool
    let subject: String
    let jkt: String
}
