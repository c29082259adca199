import Foundation
import SDKAuthorization

/// A token endpoint's answer, read the way OAuth 2.0 writes one (RFC 6749 §5.1 and §5.2) and checked
/// in an order that reads nothing it need not: its size first, then its status, then the JSON, the
/// token and its lifetime. The token exchange mode and `Samples/DPoPMode` read their servers' answers
/// with it.
///
/// ```swift
/// func accessToken(from response: ServerResponse) throws(RequestError) -> (token: String, lifetime: TimeInterval) {
///     do {
///         let answer = try TokenEndpointAnswer(response, from: "the token endpoint")
///         return (answer.token, answer.lifetime)
///     } catch {
///         throw RequestError(.init(rawValue: "tokenRequestFailed"), "No token: \(error.reason)", response: error.response)
///     }
/// }
/// ```
///
/// Its `description` and mirror never show the token.
public struct TokenEndpointAnswer: Sendable, CustomStringConvertible, CustomReflectable {
    /// How much of an answer is read, and which lifetimes are taken.
    public struct Limits: Sendable {
        /// The largest answer read, in bytes (16 KiB by default): a larger one is refused unparsed.
        public var maximumSize: Int
        /// The longest token taken, in bytes (8 KiB by default).
        public var maximumTokenLength: Int
        /// The `expires_in` values taken, in seconds (1 second to 1 day by default).
        public var lifetimes: ClosedRange<TimeInterval>

        /// Limits of your choice; the defaults suit an access token.
        public init(maximumSize: Int = 16_384, maximumTokenLength: Int = 8_192, lifetimes: ClosedRange<TimeInterval> = 1...86_400) {
            self.maximumSize = maximumSize
            self.maximumTokenLength = maximumTokenLength
            self.lifetimes = lifetimes
        }
    }

    /// Why an answer was not used.
    public struct Refusal: Error, Sendable, CustomStringConvertible {
        /// Why, as a clause for a message ("the token endpoint's answer is not a JSON object"): it
        /// never repeats a token, and escapes what it repeats of the server's error code.
        public let reason: String
        /// The server's refusal (an answer with a status other than 200, whose body is its error
        /// object); `nil` for an answer with status 200, whose body may hold a token.
        public let response: ServerResponse?

        /// ``reason``.
        public var description: String { reason }
    }

    /// The token (the `access_token`, or the member `tokenField` named): an RFC 6750 `b64token`,
    /// so it goes into a header as it is.
    public let token: String
    /// Its lifetime from `expires_in`, in seconds, within ``Limits/lifetimes``.
    public let lifetime: TimeInterval

    /// Reads `response`, the answer of `server`.
    ///
    /// - Parameters:
    ///   - response: The token endpoint's answer.
    ///   - server: How messages name the server: "the token endpoint", "the platform".
    ///   - tokenField: The member that holds the token (`access_token`).
    ///   - tokenType: The `token_type` the answer must name (any case: `DPoP`, `Bearer`), or `nil` to
    ///     read none.
    ///   - limits: How much is read, and which lifetimes are taken.
    /// - Throws: ``Refusal`` for an answer larger than ``Limits/maximumSize``, a status other than
    ///   200 (naming the server's OAuth `error` code, when its body gives one), a body that is not a
    ///   JSON object, another `token_type`, a token that is missing, longer than
    ///   ``Limits/maximumTokenLength`` or not a `b64token`, or an `expires_in` that is missing or
    ///   outside ``Limits/lifetimes``.
    public init(_ response: ServerResponse, from server: String, tokenField: String = "access_token", tokenType: String? = nil,
                limits: Limits = Limits()) throws(Refusal) {
        guard response.body.count <= limits.maximumSize else {
            throw Refusal(reason: "\(server)'s answer is larger than \(limits.maximumSize) bytes (\(response.body.count)); it is not read", response: nil)
        }
        guard response.statusCode == 200 else {
            let code = Self.errorCode(in: response).map { " (\(LogText.escaped($0, limit: 64)))" } ?? ""
            throw Refusal(reason: "\(server) refused the token request with HTTP \(response.statusCode)\(code)", response: response)
        }
        // From here on the answer may hold a token: no refusal repeats it or carries the response.
        guard case .object(let answer)? = try? BoundedJSONReader.parse(response.body) else {
            throw Refusal(reason: "\(server)'s answer is not a JSON object", response: nil)
        }
        if let tokenType {
            guard case .string(let type)? = answer["token_type"], type.lowercased() == tokenType.lowercased() else {
                throw Refusal(reason: "\(server)'s answer has no token_type \(tokenType)", response: nil)
            }
        }
        guard case .string(let token)? = answer[tokenField], token.utf8.count <= limits.maximumTokenLength,
              HeaderFieldRules.checkBearer(token) == .valid
        else {
            throw Refusal(reason: "\(server)'s \(tokenField) is missing, longer than \(limits.maximumTokenLength) bytes, or not a b64token (letters, digits and -._~+/ then =)",
                          response: nil)
        }
        guard case .number(let lifetime)? = answer["expires_in"], lifetime.isFinite, limits.lifetimes.contains(lifetime) else {
            throw Refusal(reason: "\(server)'s expires_in is missing or not a number of seconds from \(Self.seconds(limits.lifetimes.lowerBound)) to \(Self.seconds(limits.lifetimes.upperBound))",
                          response: nil)
        }
        self.token = token
        self.lifetime = lifetime
    }

    /// The OAuth `error` member of a small JSON error body (at most 4 KiB read), or `nil`.
    public static func errorCode(in response: ServerResponse) -> String? {
        guard response.body.count <= 4_096, case .object(let fields)? = try? BoundedJSONReader.parse(response.body),
              case .string(let code)? = fields["error"]
        else { return nil }
        return code
    }

    /// The lifetime only.
    public var description: String { "TokenEndpointAnswer(token: redacted, lifetime: \(Self.seconds(lifetime)) s)" }

    /// The description only: no child shows the token.
    public var customMirror: Mirror { Mirror(self, children: ["description": description], displayStyle: .struct) }

    private static func seconds(_ value: TimeInterval) -> String {
        value.rounded() == value && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}

extension OutgoingRequest {
    /// A request to a token endpoint as OAuth 2.0 writes one (RFC 6749 §4.4, §6): `POST` to `url`,
    /// `fields` form-encoded in their order (`application/x-www-form-urlencoded`: every byte but
    /// letters, digits and `-._~` percent-encoded), `Accept: application/json`, and `headers` added
    /// (a DPoP proof, say). Its answer is read with ``TokenEndpointAnswer``.
    ///
    /// ```swift
    /// let request = OutgoingRequest.tokenRequest(to: tokenURL, form: ["grant_type": "client_credentials", "client_id": clientID])
    /// ```
    public static func tokenRequest(to url: URL, form fields: KeyValuePairs<String, String>, headers: [String: String] = [:]) -> OutgoingRequest {
        let body = fields.map { "\(formEncoded($0.key))=\(formEncoded($0.value))" }.joined(separator: "&")
        let fixed = ["Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"]
        return OutgoingRequest(method: "POST", url: url, headers: fixed.merging(headers) { _, given in given }, body: Data(body.utf8))
    }

    /// `text` as a form value: its UTF-8 bytes, all but letters, digits and `-._~` as `%XX`.
    static func formEncoded(_ text: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var encoded: [UInt8] = []
        encoded.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                encoded.append(byte)
            default:
                encoded += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: encoded, as: UTF8.self)
    }
}
