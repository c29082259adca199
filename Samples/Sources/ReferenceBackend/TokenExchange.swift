import Crypto
import Foundation
import Hummingbird
import Synchronization

// The payload-signing / token-exchange role (Google CCAI Platform style):
//   POST /ccai/exchange  {"token": "<JWT signed by the host app with the shared secret>"}
//        -> 200 {"auth_token": "...", "token_type": "Bearer", "expires_in": <seconds>}
//   GET  /ccai/chats     Authorization: Bearer <auth_token> -> 200 {"success": true, "subject": "..."}

/// The auth tokens `/ccai/exchange` issued: token -> subject and expiry. At most 10,000 live ones.
final class ExchangeLedger: Sendable {
    private struct Entry { let subject: String; let expiresAt: Date }
    private let entries = Mutex<[String: Entry]>([:])
    static let capacity = 10_000

    /// Issues a random 256-bit token for `subject`.
    func issue(subject: String, lifetime: TimeInterval, now: Date) -> String {
        let token = Base64URL.encode(SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) })
        entries.withLock { entries in
            if entries.count >= Self.capacity { entries = entries.filter { $0.value.expiresAt > now } }
            if entries.count >= Self.capacity, let oldest = entries.min(by: { $0.value.expiresAt < $1.value.expiresAt })?.key {
                entries[oldest] = nil
            }
            entries[token] = Entry(subject: subject, expiresAt: now.addingTimeInterval(lifetime))
        }
        return token
    }

    enum Lookup { case valid(subject: String), expired, unknown }

    func look(_ token: String, now: Date) -> Lookup {
        guard let entry = entries.withLock({ $0[token] }) else { return .unknown }
        return entry.expiresAt > now ? .valid(subject: entry.subject) : .expired
    }

    /// Makes every issued token expired, so tests see expiry without waiting.
    func expireAll() {
        entries.withLock { entries in
            entries = entries.mapValues { Entry(subject: $0.subject, expiresAt: .distantPast) }
        }
    }
}

extension ReferenceBackend {
    /// The longest span between a signed payload's `iat` and `exp` accepted, in seconds.
    public static let maximumSignedPayloadLifetime: TimeInterval = 3_600
    /// How far in the future a signed payload's `iat` may lie (clock skew), in seconds.
    public static let signedPayloadClockSkew: TimeInterval = 60

    /// The longest digit string a signed payload's `iat` may be (12 digits).
    public static let maximumDigitStringIssuedAtLength = 12

    /// The seconds since 1970 a signed payload's `iat` claim says: a finite number, or a string of
    /// 1 to ``maximumDigitStringIssuedAtLength`` ASCII digits and nothing else (no sign, space,
    /// fraction or exponent), as the CCAI Platform's Ruby sample sends it; `nil` for anything else.
    static func issuedAtSeconds(_ claim: JSONValue) -> Double? {
        switch claim {
        case .number(let seconds) where seconds.isFinite:
            return seconds
        case .string(let text):
            let digits = text.utf8
            guard !digits.isEmpty, digits.count <= maximumDigitStringIssuedAtLength,
                  digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
            else { return nil }
            return digits.reduce(0) { $0 * 10 + Double($1 - UInt8(ascii: "0")) }
        default:
            return nil
        }
    }

    /// Whether `phone` is an E.164 number: `+`, then 2 to 15 digits, the first not 0.
    public static func isE164(_ phone: String) -> Bool {
        let bytes = Array(phone.utf8)
        guard (3...16).contains(bytes.count), bytes[0] == UInt8(ascii: "+"), bytes[1] != UInt8(ascii: "0") else { return false }
        return bytes.dropFirst().allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }
}

extension Routes {
    func registerTokenExchange(on router: Router<BasicRequestContext>) {
        router.post("/ccai/exchange") { request, _ in try await self.exchange(request) }
        router.get("/ccai/chats") { request, _ in try await self.chats(request) }
    }

    private func exchange(_ request: Request) async throws -> Response {
        guard case .success(let body) = try await record(request) else { return Self.bodyTooLarge() }
        guard let fields = JSONValue.object(from: body, maximumDepth: ReferenceBackend.maximumBodyJSONDepth),
              let token = fields["token"]?.stringValue
        else {
            return Self.failure(.invalidRequest, "The exchange body must be a JSON object with the signed JWT in \"token\".")
        }
        switch verifySignedPayload(token, now: configuration.now()) {
        case .failure(let failure):
            return Self.failure(failure)
        case .success(let subject):
            let lifetime = configuration.exchangeTokenLifetime
            let authToken = exchangeLedger.issue(subject: subject, lifetime: lifetime, now: configuration.now())
            return try Self.json(.ok, ExchangeAnswer(authToken: authToken, tokenType: "Bearer", expiresIn: Int(lifetime)))
        }
    }

    private func chats(_ request: Request) async throws -> Response {
        guard case .success = try await record(request) else { return Self.bodyTooLarge() }
        guard let header = request.headers[.authorization] else {
            return Self.failure(.missingAuthorization, "The request has no Authorization header.")
        }
        guard header.utf8.count <= ReferenceBackend.maximumAuthorizationHeaderSize else {
            return Self.failure(.tokenTooLarge, "The Authorization header is longer than \(ReferenceBackend.maximumAuthorizationHeaderSize) bytes.")
        }
        guard header.lowercased().hasPrefix("bearer ") else {
            return Self.failure(.unsupportedScheme, "This endpoint requires a Bearer auth token from /ccai/exchange.")
        }
        let token = header.dropFirst("bearer ".count).trimmingCharacters(in: .whitespaces)
        switch exchangeLedger.look(token, now: configuration.now()) {
        case .unknown: return Self.failure(.invalidAuthToken, "The auth token was not issued by /ccai/exchange.")
        case .expired: return Self.failure(.tokenExpired, "The auth token has expired; exchange a new signed payload.")
        case .valid(let subject): return try Self.json(.ok, ChatsAnswer(success: true, subject: subject))
        }
    }

    /// Checks a payload the host app signed with the shared secret; returns the subject
    /// (`identifier`, or `anonymous`).
    func verifySignedPayload(_ token: String, now: Date) -> Result<String, AuthFailure> {
        func fail(_ code: ReferenceBackend.ErrorCode, _ message: String) -> Result<String, AuthFailure> {
            .failure(AuthFailure(code: code, message: message))
        }
        guard token.utf8.count <= ReferenceBackend.maximumAuthorizationHeaderSize else {
            return fail(.tokenTooLarge, "The signed payload is longer than \(ReferenceBackend.maximumAuthorizationHeaderSize) bytes.")
        }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        let depth = ReferenceBackend.maximumTokenJSONDepth
        guard parts.count == 3,
              let headerData = Base64URL.decode(parts[0]), let header = JSONValue.object(from: headerData, maximumDepth: depth),
              let payloadData = Base64URL.decode(parts[1]), let claims = JSONValue.object(from: payloadData, maximumDepth: depth)
        else {
            return fail(.malformedToken, "The signed payload is not a JWT with a JSON header and payload.")
        }
        let algorithm = header["alg"]?.stringValue ?? "none"
        if algorithm.lowercased() == "none" || parts[2].isEmpty {
            return fail(.unsignedPayload, "The payload is not signed; sign it with the shared secret (HS256 or HS384).")
        }
        let signingInput = Data(token.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        guard let signature = Base64URL.decode(parts[2]) else {
            return fail(.malformedToken, "The signature of the signed payload is not base64url.")
        }
        let key = SymmetricKey(data: Data(configuration.exchangeSecret.utf8))
        let valid: Bool
        switch algorithm {
        case "HS256": valid = HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: signingInput, using: key)
        case "HS384": valid = HMAC<SHA384>.isValidAuthenticationCode(signature, authenticating: signingInput, using: key)
        default:
            let shown = algorithm.count <= 16 ? algorithm : algorithm.prefix(16) + "…"
            return fail(.unsupportedAlgorithm, "Algorithm \(shown) is not accepted; sign with HS256 or HS384.")
        }
        guard valid else { return fail(.invalidSignature, "The signature does not match the shared secret.") }
        guard let issuedAtClaim = claims["iat"], issuedAtClaim != .null, let expiresAt = claims["exp"]?.numberValue else {
            return fail(.missingClaim, "The signed payload needs numeric 'iat' and 'exp' claims.")
        }
        // The vendor's Ruby sample sends `"iat": "1700000000"`: a digit string is the number it spells.
        guard let issuedAt = ReferenceBackend.issuedAtSeconds(issuedAtClaim) else {
            return fail(.invalidClaims, "'iat' must be a number of seconds since 1970, or a string of 1 to \(ReferenceBackend.maximumDigitStringIssuedAtLength) digits such as \"1700000000\".")
        }
        let nowSeconds = now.timeIntervalSince1970
        guard expiresAt > nowSeconds else { return fail(.tokenExpired, "The signed payload has expired.") }
        guard issuedAt <= nowSeconds + ReferenceBackend.signedPayloadClockSkew,
              expiresAt - issuedAt <= ReferenceBackend.maximumSignedPayloadLifetime
        else {
            return fail(.invalidClaims, "'iat' lies in the future, or 'exp' is more than \(Int(ReferenceBackend.maximumSignedPayloadLifetime)) s after it.")
        }
        // `phone: ""` (the vendor's samples, for a user without one) counts as no phone.
        if let phone = claims["phone"], phone.stringValue != "" {
            guard let number = phone.stringValue, ReferenceBackend.isE164(number) else {
                return fail(.invalidPhone, "'phone' must be an E.164 number such as +14155550100.")
            }
        }
        let subject = claims["identifier"]?.stringValue.flatMap { $0.isEmpty ? nil : String($0.prefix(256)) } ?? "anonymous"
        return .success(subject)
    }
}

struct ExchangeAnswer: Encodable {
    let authToken: String
    let tokenType: String
    let expiresIn: Int
    private enum CodingKeys: String, CodingKey { case authToken = "auth_token", tokenType = "token_type", expiresIn = "expires_in" }
}

struct ChatsAnswer: Encodable {
    let success: Bool
    let subject: String
}
