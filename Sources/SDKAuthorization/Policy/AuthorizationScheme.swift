internal import SDKAuthorizationPrimitives

/// Which credential a request carries: the name of a provider slot in a ``RequestAuthorizer``.
///
/// The core's schemes are ``apiKey`` (the project's API key), ``bearer`` (the app's provider) and
/// ``none``; the signature mode (`SDKAuthorizationSignature`) adds `signature`. It is a struct
/// rather than an enum, so an SDK author can name more without breaking any caller's `switch`,
/// each with a provider of its own:
///
/// ```swift
/// extension AuthorizationScheme {
///     static let partnerKey = AuthorizationScheme("partnerKey")
/// }
/// let authorizer = try RequestAuthorizer(policy: policy, providers: [.partnerKey: partnerKeyProvider])
/// ```
public struct AuthorizationScheme: RawRepresentable, Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The scheme's name.
    public let rawValue: String

    /// Creates a scheme.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Creates a scheme.
    public init(_ name: String) { self.rawValue = name }
    /// Creates a scheme from a literal.
    public init(stringLiteral value: String) { self.rawValue = value }

    /// An API key: your API's own header (`Credential.apiKey(_:header:)`), or a mode's project
    /// credential (the Engagement mode's `Authorization: Token <key>`).
    public static let apiKey = AuthorizationScheme("apiKey")
    /// A token from the app's authorization provider: `Authorization: Bearer <jwt>`.
    public static let bearer = AuthorizationScheme("bearer")
    /// No credential.
    public static let none = AuthorizationScheme("none")

    /// The name, with anything that could forge a log line escaped.
    public var description: String { LogText.plain(rawValue, limit: 64) }
}
