import Foundation
import SDKAuthorization

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

/// A claim value encodes as the JSON value it stands for, so a payload of them goes to a server as
/// it would go in the token: `["payload_type": .string("auth_token"), "iat": .number(1_700_000_000)]`
/// encodes as `{"iat":1700000000,"payload_type":"auth_token"}` with `JSONEncoder` (sorted keys), and
/// decodes back to the same values.
extension JWTClaimValue: Codable {
    /// Decodes any JSON value: `null`, a boolean, a number, a string, an array or an object.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JWTClaimValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JWTClaimValue].self))
        }
    }

    /// Encodes the JSON value this stands for.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        case .null: try container.encodeNil()
        case .array(let values): try container.encode(values)
        case .object(let members): try container.encode(members)
        }
    }
}

/// Why a string could not be read as a JWT.
///
/// It is a struct with a ``Code`` rather than an enum, as `RequestError` is: later versions add
/// codes without breaking any caller's exhaustive `switch`. Match on ``code`` and read the context
/// from the properties that apply to it; the others are `nil`.
///
/// No text of it (``message``, `description`, `debugDescription`, `localizedDescription`, `dump`)
/// holds the token: the one part of a token it repeats, a repeated claim's name, is escaped and
/// cut to 64 characters. ``name`` holds that name whole.
///
/// Two errors are equal when their ``code`` and ``message`` are equal: its texts, `dump` and
/// equality are those of every error of the framework (`ErrorShape.Coded`).
public struct JWTDecodingError: ErrorShape.Coded {
    /// What went wrong, as a stable name a caller can match on.
    public struct Code: ErrorShape.Code {
        /// The code's name.
        public let rawValue: String
        /// Creates a code.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// A compact JWT has exactly three dot-separated segments; ``JWTDecodingError/segmentCount`` has this one's.
        public static let wrongSegmentCount = Code(rawValue: "wrongSegmentCount")
        /// A segment is not valid base64url.
        public static let invalidBase64 = Code(rawValue: "invalidBase64")
        /// The header or payload does not decode to a JSON object.
        public static let notJSON = Code(rawValue: "notJSON")
        /// A registered claim has the wrong type, e.g. `exp` given as a string.
        public static let invalidClaim = Code(rawValue: "invalidClaim")
        /// The token is longer than ``JWTClaims/maximumTokenLength``; it was not parsed.
        public static let tooLarge = Code(rawValue: "tooLarge")
        /// A claim (or header parameter) appears twice in one object: readers disagree on which wins.
        public static let duplicateClaim = Code(rawValue: "duplicateClaim")
        /// The header or payload nests JSON deeper than the reader's limit of 32.
        public static let tooDeep = Code(rawValue: "tooDeep")
    }

    // Held inline rather than in a shared box as RequestError's context is: JWTs are decoded
    // synchronously, often in an app's provider on its own dispatch queue, and ThreadSanitizer on
    // Linux does not see a continuation's hand-off from such a queue to a task, so it would report
    // a box's fields as a data race.

    /// What went wrong.
    public let code: Code
    /// A sentence that says what happened; never the token.
    public let message: String
    /// How many dot-separated segments the token has, for ``Code/wrongSegmentCount``.
    public let segmentCount: Int?
    /// Which segment (`header` or `payload`), for ``Code/invalidBase64``, ``Code/notJSON`` and ``Code/tooDeep``.
    public let segment: String?
    /// The claim's name, for ``Code/invalidClaim`` and ``Code/duplicateClaim`` (whole: the
    /// message escapes and cuts a repeated one, which comes from the token).
    public let name: String?
    /// What the claim must be, for ``Code/invalidClaim``.
    public let expected: String?
    /// The longest token read, for ``Code/tooLarge``.
    public let limit: Int?

    /// Creates an error with `code` and `message` (for codes added in extensions).
    ///
    /// The message is shown and logged as it is: never the token or a part of it.
    public init(_ code: Code, _ message: String) {
        self.init(code, message, segmentCount: nil)
    }

    private init(_ code: Code, _ message: String, segmentCount: Int?, segment: String? = nil, name: String? = nil, expected: String? = nil,
                 limit: Int? = nil) {
        self.code = code
        self.message = message
        self.segmentCount = segmentCount
        self.segment = segment
        self.name = name
        self.expected = expected
        self.limit = limit
    }

    // MARK: Making errors

    /// The token has `count` dot-separated segments, not 3.
    public static func wrongSegmentCount(_ count: Int) -> JWTDecodingError {
        JWTDecodingError(.wrongSegmentCount, "A JWT has 3 segments separated by '.', this one has \(count)", segmentCount: count)
    }

    /// The `segment` (`header` or `payload`) is not valid base64url.
    public static func invalidBase64(segment: String) -> JWTDecodingError {
        JWTDecodingError(.invalidBase64, "The JWT \(segment) is not valid base64url", segmentCount: nil, segment: segment)
    }

    /// The `segment` (`header` or `payload`) does not decode to a JSON object.
    public static func notJSON(segment: String) -> JWTDecodingError {
        JWTDecodingError(.notJSON, "The JWT \(segment) is not a JSON object", segmentCount: nil, segment: segment)
    }

    /// The registered claim `name` has the wrong type; it must be `expected`.
    public static func invalidClaim(name: String, expected: String) -> JWTDecodingError {
        JWTDecodingError(.invalidClaim, "The JWT claim '\(name)' must be \(expected)", segmentCount: nil, name: name, expected: expected)
    }

    /// The token is longer than `limit` characters; it was not parsed.
    public static func tooLarge(limit: Int) -> JWTDecodingError {
        JWTDecodingError(.tooLarge, "The JWT is longer than \(limit) characters and was not read", segmentCount: nil, limit: limit)
    }

    /// The claim (or header parameter) `name` appears twice in one object.
    public static func duplicateClaim(name: String) -> JWTDecodingError {
        JWTDecodingError(.duplicateClaim, "The JWT holds the claim \(LogText.escaped(name, limit: 64)) twice", segmentCount: nil, name: name)
    }

    /// The `segment` (`header` or `payload`) nests JSON deeper than the reader's limit.
    public static func tooDeep(segment: String) -> JWTDecodingError {
        JWTDecodingError(.tooDeep, "The JWT \(segment) nests JSON deeper than \(BoundedJSONReader.defaultMaximumDepth) levels", segmentCount: nil,
                         segment: segment)
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
        try self.init(decoding: token, digitStringDates: [])
    }

    /// Decodes `token`, also taking the date claims named in `digitStringDates` when they are a
    /// string that spells a whole number of seconds: 1 to ``maximumDigitStringDateLength`` ASCII
    /// digits, nothing else (no sign, space, fraction or exponent). For payloads whose signer sends
    /// such a claim (the CCAI Platform's Ruby sample, `"iat": "1700000000"`); any other string fails
    /// with ``JWTDecodingError/Code/invalidClaim`` naming the claim.
    ///
    /// A date claim named in `unreadDates` that holds no number (nor such a string) is read as
    /// `nil` instead of failing: for a claim the caller only passes on, which the server judges.
    ///
    /// ```swift
    /// // A payload the app's server signed with `"iat": "1700000000"`, or a Ruby Time as a date string.
    /// let claims = try JWTClaims(decoding: signed, digitStringDates: ["iat"], unreadDates: ["iat"])
    /// ```
    ///
    /// - Parameters:
    ///   - token: The compact JWT.
    ///   - digitStringDates: Date claims (`exp`, `iat`) also taken as a string of digits.
    ///   - unreadDates: Date claims read as `nil`, not refused, when they hold no date.
    /// - Throws: ``JWTDecodingError`` for every malformed input; never traps.
    public init(decoding token: String, digitStringDates: Set<String>, unreadDates: Set<String> = []) throws(JWTDecodingError) {
        guard token.utf8.count <= Self.maximumTokenLength else { throw .tooLarge(limit: Self.maximumTokenLength) }
        let segments = token.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3 else { throw .wrongSegmentCount(segments.count) }
        header = try Self.object(segments[0], name: "header")
        payload = try Self.object(segments[1], name: "payload")
        expiresAt = try Self.date(payload, "exp", digitString: digitStringDates.contains("exp"), lenient: unreadDates.contains("exp"))
        issuedAt = try Self.date(payload, "iat", digitString: digitStringDates.contains("iat"), lenient: unreadDates.contains("iat"))
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

    private static func object(_ segment: Substring, name: String) throws(JWTDecodingError) -> [String: JWTClaimValue] {
        guard !segment.isEmpty, let data = Base64URL.decode(segment) else { throw .invalidBase64(segment: name) }
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

    /// The longest digit string taken as a date (12 digits: beyond the year 30000).
    public static let maximumDigitStringDateLength = 12

    private static func date(_ payload: [String: JWTClaimValue], _ name: String, digitString: Bool = false, lenient: Bool = false) throws(JWTDecodingError) -> Date? {
        switch payload[name] {
        case nil, .null?: return nil
        case .number(let seconds)? where seconds.isFinite:
            return Date(timeIntervalSince1970: seconds)
        case .string(let text)? where digitString:
            if let seconds = wholeSeconds(text) { return Date(timeIntervalSince1970: seconds) }
            if lenient { return nil }
            throw .invalidClaim(name: name, expected: "a number of seconds since 1970, or a string of 1 to \(maximumDigitStringDateLength) digits such as \"1700000000\"")
        default:
            if lenient { return nil }
            throw .invalidClaim(name: name, expected: "a number of seconds since 1970")
        }
    }

    /// The number a string of 1 to ``maximumDigitStringDateLength`` ASCII digits spells, else `nil`.
    static func wholeSeconds(_ text: String) -> TimeInterval? {
        let digits = text.utf8
        guard !digits.isEmpty, digits.count <= maximumDigitStringDateLength,
              digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        else { return nil }
        return digits.reduce(0) { $0 * 10 + TimeInterval($1 - UInt8(ascii: "0")) }
    }

    private static func string(_ payload: [String: JWTClaimValue], _ name: String) throws(JWTDecodingError) -> String? {
        switch payload[name] {
        case nil, .null?: return nil
        case .string(let value)?: return value
        default: throw .invalidClaim(name: name, expected: "a string")
        }
    }
}
