import Foundation

/// A JSON value found in a JWT header or payload.
///
/// It is read by a bounded, single-pass reader: time linear in the input, nesting at most 32
/// deep, a repeated key refused.
public enum JWTClaimValue: Sendable, Equatable {
    case string(String)
    case number(Double)
    case bool(Bool)
    case null
    case array([JWTClaimValue])
    case object([String: JWTClaimValue])

    /// The string, when this is a string.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The number, when this is a number.
    public var numberValue: Double? {
        if case .number(let value) = self { return value }
        return nil
    }

}

/// Why a string could not be read as a JWT.
public enum JWTDecodingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A compact JWT has exactly three dot-separated segments.
    case wrongSegmentCount(Int)
    /// A segment is not valid base64url.
    case invalidBase64(segment: String)
    /// The header or payload does not decode to a JSON object.
    case notJSON(segment: String)
    /// A registered claim has the wrong type, e.g. `exp` given as a string.
    case invalidClaim(name: String, expected: String)
    /// The token is longer than ``JWTClaims/maximumTokenLength``; it was not parsed.
    case tooLarge(limit: Int)
    /// A claim (or header parameter) appears twice in one object: readers disagree on which wins.
    case duplicateClaim(name: String)
    /// The header or payload nests JSON deeper than the reader's limit of 32.
    case tooDeep(segment: String)

    public var description: String {
        switch self {
        case .wrongSegmentCount(let count):
            "A JWT has 3 segments separated by '.', this one has \(count)"
        case .invalidBase64(let segment):
            "The JWT \(segment) is not valid base64url"
        case .notJSON(let segment):
            "The JWT \(segment) is not a JSON object"
        case .invalidClaim(let name, let expected):
            "The JWT claim '\(name)' must be \(expected)"
        case .tooLarge(let limit):
            "The JWT is longer than \(limit) characters and was not read"
        case .duplicateClaim(let name):
            "The JWT holds the claim \(LogText.escaped(name, limit: 64)) twice"
        case .tooDeep(let segment):
            "The JWT \(segment) nests JSON deeper than \(BoundedJSONReader.defaultMaximumDepth) levels"
        }
    }
}

/// The decoded header and payload of a compact JWT.
///
/// This reads claims only. It **never verifies the signature**: the framework holds no keys, the
/// server does. Use it to decide when a token is about to expire, never to trust its content.
///
/// ```swift
/// let claims = try JWTClaims(decoding: token)
/// if let expiry = claims.expiresAt, expiry.timeIntervalSinceNow < 60 { /* refresh */ }
/// ```
public struct JWTClaims: Sendable, Equatable {
    /// The longest token read, in UTF-8 bytes (32 KB); a longer one fails with
    /// ``JWTDecodingError/tooLarge(limit:)`` before any decoding.
    public static let maximumTokenLength = 32_768

    /// The JOSE header, e.g. `alg`, `typ`, `kid`.
    public let header: [String: JWTClaimValue]
    /// Every claim of the payload, registered and custom.
    public let payload: [String: JWTClaimValue]

    /// `exp`, the expiry time.
    public let expiresAt: Date?
    /// `iat`, when the token was issued.
    public let issuedAt: Date?
    /// `sub`, the subject (user ID).
    public let subject: String?
    /// `iss`, the issuer.
    public let issuer: String?
    /// `aud`, the audiences (a single string becomes a one-element array).
    public let audience: [String]

    /// Decodes `token` (`header.payload.signature`, base64url).
    ///
    /// - Throws: ``JWTDecodingError`` for every malformed input; never traps.
    public init(decoding token: String) throws(JWTDecodingError) {
        guard token.utf8.count <= Self.maximumTokenLength else { throw .tooLarge(limit: Self.maximumTokenLength) }
        let segments = token.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3 else { throw .wrongSegmentCount(segments.count) }
        header = try Self.object(segments[0], name: "header")
        payload = try Self.object(segments[1], name: "payload")
        expiresAt = try Self.date(payload, "exp")
        issuedAt = try Self.date(payload, "iat")
        subject = try Self.string(payload, "sub")
        issuer = try Self.string(payload, "iss")
        switch payload["aud"] {
        case nil, .null?:
            audience = []
        case .string(let value)?:
            audience = [value]
        case .array(let values)?:
            var audiences: [String] = []
            for value in values {
                guard let string = value.stringValue else {
                    throw .invalidClaim(name: "aud", expected: "a string or an array of strings")
                }
                audiences.append(string)
            }
            audience = audiences
        default:
            throw .invalidClaim(name: "aud", expected: "a string or an array of strings")
        }
    }

    /// A claim by name, registered or custom.
    public subscript(claim name: String) -> JWTClaimValue? { payload[name] }

    /// Whether the token expires less than `leeway` seconds after `now`. A token without `exp`
    /// never counts as expiring.
    public func expires(within leeway: TimeInterval, of now: Date) -> Bool {
        guard let expiresAt else { return false }
        return expiresAt.timeIntervalSince(now) < leeway
    }

    static func base64URLDecode(_ segment: Substring) -> Data? {
        var base64 = segment.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        guard !base64.contains("=") else { return nil }
        switch base64.count % 4 {
        case 0: break
        case 2: base64 += "=="
        case 3: base64 += "="
        default: return nil
        }
        return Data(base64Encoded: base64)
    }

    private static func object(_ segment: Substring, name: String) throws(JWTDecodingError) -> [String: JWTClaimValue] {
        guard !segment.isEmpty, let data = base64URLDecode(segment) else { throw .invalidBase64(segment: name) }
        do {
            guard case .object(let values) = try BoundedJSONReader.parse(data) else { throw JWTDecodingError.notJSON(segment: name) }
            return values
        } catch BoundedJSONReader.Failure.duplicateKey(let key) {
            throw .duplicateClaim(name: key)
        } catch BoundedJSONReader.Failure.tooDeep {
            throw .tooDeep(segment: name)
        } catch {
            throw .notJSON(segment: name)
        }
    }

    private static func date(_ payload: [String: JWTClaimValue], _ name: String) throws(JWTDecodingError) -> Date? {
        switch payload[name] {
        case nil, .null?: return nil
        case .number(let seconds)? where seconds.isFinite:
            return Date(timeIntervalSince1970: seconds)
        default:
            throw .invalidClaim(name: name, expected: "a number of seconds since 1970")
        }
    }

    private static func string(_ payload: [String: JWTClaimValue], _ name: String) throws(JWTDecodingError) -> String? {
        switch payload[name] {
        case nil, .null?: return nil
        case .string(let value)?: return value
        default: throw .invalidClaim(name: name, expected: "a string")
        }
    }
}
