import SDKAuthorization
import SDKAuthorizationModeKit

/// The project-level credential sent to API-key endpoints: `Token <apiKey>` or `Bearer <jwt>`.
///
/// Its description never shows the credential: `Token Authorization (token redacted)`.
public struct ProjectAuthorization: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The header scheme the credential goes out with.
    public enum Scheme: String, Sendable, Equatable {
        /// `Authorization: Token <apiKey>`
        case token = "Token"
        /// `Authorization: Bearer <jwt>`
        case bearer = "Bearer"
    }

    /// The scheme.
    public let scheme: Scheme
    /// The credential without its scheme prefix.
    public let credential: String

    /// An API key, sent as `Authorization: Token <apiKey>`.
    public static func token(_ apiKey: String) throws(ConfigurationError) -> ProjectAuthorization {
        try ProjectAuthorization(scheme: .token, credential: apiKey, field: "authorization token")
    }

    /// A bearer credential, sent as `Authorization: Bearer <jwt>`.
    public static func bearer(_ jwt: String) throws(ConfigurationError) -> ProjectAuthorization {
        try ProjectAuthorization(scheme: .bearer, credential: jwt, field: "authorization bearer token")
    }

    /// Reads a configured string: `Token <key>`, `Bearer <jwt>` or a bare API key.
    ///
    /// - Throws: `ConfigurationError.basicAuthenticationNotSupported` for `Basic ...`, and
    ///   `ConfigurationError.emptyCredential(field:)` or
    ///   `ConfigurationError.credentialContainsControlCharacters(field:)` for a bad credential.
    public init(parsing configured: String) throws(ConfigurationError) {
        let trimmed = configured.drop(while: { $0 == " " })
        if trimmed.lowercased() == "basic" || Self.dropScheme("Basic", from: String(trimmed)) != nil {
            throw .basicAuthenticationNotSupported
        }
        // A scheme word alone only looks like a credential.
        if ["token", "bearer"].contains(trimmed.lowercased()) {
            throw .emptyCredential(field: "authorization \(trimmed.lowercased())")
        }
        if let rest = Self.dropScheme("Token", from: configured) {
            self = try .token(rest)
        } else if let rest = Self.dropScheme("Bearer", from: configured) {
            self = try .bearer(rest)
        } else {
            self = try .token(configured)
        }
    }

    private init(scheme: Scheme, credential: String, field: String) throws(ConfigurationError) {
        try ConfigurationError.checkCredential(credential, field: field)
        // A key or token is one word: `Token a b` or `Bearer Token x` is a mistake, not a credential.
        guard !credential.contains(" ") else {
            throw .invalidValue(key: "authorization", reason: "the \(field) holds white space; a key or token is one word")
        }
        if scheme == .bearer, HeaderFieldRules.checkBearer(credential) != .valid {
            throw .invalidValue(key: "authorization", reason: "the \(field) is not an RFC 6750 bearer token")
        }
        // Sent as `Credential.authorization(scheme: "Token", key)`, which sends only an RFC 7235
        // token68 (letters, digits, `-._~+/`, trailing `=`): a key it would refuse on every request
        // is refused here, when the configuration is made.
        if scheme == .token, HeaderFieldRules.checkBearer(credential) != .valid {
            throw .invalidValue(key: "authorization", reason: "the \(field) is not an RFC 7235 token68 (letters, digits, -._~+/ and a trailing =)")
        }
        self.scheme = scheme
        self.credential = credential
    }

    /// `Token <key>` or `Bearer <jwt>`, the exact header value.
    var headerValue: String { "\(scheme.rawValue) \(credential)" }

    /// The scheme word matched case-insensitively, followed by at least one space.
    private static func dropScheme(_ scheme: String, from value: String) -> String? {
        guard value.count > scheme.count,
              value.prefix(scheme.count).caseInsensitiveCompare(scheme) == .orderedSame,
              value.dropFirst(scheme.count).first == " "
        else { return nil }
        return String(value.dropFirst(scheme.count).drop(while: { $0 == " " }))
    }

    public var description: String { "\(scheme.rawValue) Authorization (token redacted)" }
    public var debugDescription: String { "\(scheme.rawValue) Authorization \(Redaction.redact(credential))" }
    public var customMirror: Mirror { Mirror(self, children: ["scheme": scheme, "credential": Redaction.redact(credential)], displayStyle: .struct) }
}
