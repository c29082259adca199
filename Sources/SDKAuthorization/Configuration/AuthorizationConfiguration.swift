import Foundation

/// How the customer-token provider is found by name, following one of the two vendor conventions.
public enum ProviderLookup: Sendable, Equatable {
    /// The iOS convention: a type registered under a well-known name (default `ExponeaAuthProvider`,
    /// the stand-in for `@objc(ExponeaAuthProvider)`), which must be an `NSObject` subclass.
    case implicitName(String)
    /// The Android convention: the configuration names a module-qualified class such as
    /// `MyApp.ExampleAuthProvider`; `nil` means none was named.
    case registeredClassName(String?)

    /// The iOS default name.
    public static let defaultImplicitName = "ExponeaAuthProvider"

    /// `implicitName("ExponeaAuthProvider")`.
    public static let `default` = ProviderLookup.implicitName(defaultImplicitName)
}

/// The opt-in cache for customer tokens from a provider class (``AuthorizationProviderType``).
/// Without it the provider is asked for every request. Native providers manage their own tokens.
public enum CustomerTokenCaching: Sendable, Equatable {
    /// Ask the provider for every request (the vendor behaviour).
    case disabled
    /// Reuse a token until its JWT `exp` is less than `leeway` seconds away; tokens without a
    /// readable `exp` are never cached. The cache is dropped on identity change and on rejection.
    case honoringExpiry(leeway: TimeInterval)
}

/// Everything an SDK needs to authorize its calls to one project.
///
/// Build it in code or read it from a JSON or property-list file
/// (``init(contentsOf:)``). Every value is checked when it is set, so a configuration that exists
/// is a valid one.
///
/// ```swift
/// let configuration = try AuthorizationConfiguration(
///     projectToken: "my-project",
///     baseURL: "https://api.exponea.com",
///     authorization: "Token my-api-key",
///     advancedAuthEnabled: true
/// )
/// ```
public struct AuthorizationConfiguration: Sendable, Equatable {
    /// The project token substituted into endpoint paths.
    public let projectToken: String
    /// The API's base URL (`http` or `https`).
    public let baseURL: URL
    /// The credential for API-key endpoints, or `nil` when the SDK sends none.
    public let authorization: ProjectAuthorization?
    /// Whether customer-token endpoints use a provider's token. When false, no provider is ever loaded.
    public var advancedAuthEnabled: Bool
    /// How the customer-token provider is found.
    public var providerLookup: ProviderLookup
    /// Whether customer tokens are cached (off by default).
    public var customerTokenCaching: CustomerTokenCaching

    /// Creates a configuration, checking every value.
    ///
    /// - Parameters:
    ///   - projectToken: The project token; must not be empty.
    ///   - baseURL: An absolute `http`/`https` URL with a host.
    ///   - authorization: `Token <key>`, `Bearer <jwt>`, a bare API key, or `nil`.
    ///   - advancedAuthEnabled: Whether customer tokens are used.
    ///   - providerLookup: How the provider is found (default: the name `ExponeaAuthProvider`).
    ///   - customerTokenCaching: Opt-in token cache (default: disabled).
    /// - Throws: ``ConfigurationError`` naming the first bad value.
    public init(
        projectToken: String,
        baseURL: String,
        authorization: String?,
        advancedAuthEnabled: Bool = false,
        providerLookup: ProviderLookup = .default,
        customerTokenCaching: CustomerTokenCaching = .disabled
    ) throws(ConfigurationError) {
        guard !projectToken.isEmpty, !projectToken.allSatisfy(\.isWhitespace) else { throw .emptyProjectToken }
        guard HeaderFieldRules.check(projectToken) != .forbiddenCharacters else {
            throw .credentialContainsControlCharacters(field: "projectToken")
        }
        self.projectToken = projectToken
        self.baseURL = try Self.checkedBaseURL(baseURL)
        self.authorization = try authorization.map { (value) throws(ConfigurationError) in
            try ProjectAuthorization(parsing: value)
        }
        self.advancedAuthEnabled = advancedAuthEnabled
        switch providerLookup {
        case .implicitName(let name) where name.allSatisfy(\.isWhitespace),
             .registeredClassName(let name?) where name.allSatisfy(\.isWhitespace):
            throw .invalidValue(key: "providerName", reason: "the provider name must not be empty")
        default:
            break
        }
        self.providerLookup = providerLookup
        if case .honoringExpiry(let leeway) = customerTokenCaching, !(leeway >= 0 && leeway.isFinite) {
            throw .invalidValue(key: "customerTokenCacheLeeway", reason: "the leeway must be a finite number of seconds, 0 or more")
        }
        self.customerTokenCaching = customerTokenCaching
    }

    static func checkedBaseURL(_ value: String) throws(ConfigurationError) -> URL {
        guard HeaderFieldRules.check(value) == .valid,
              let components = URLComponents(string: value),
              let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = components.host, !host.isEmpty,
              components.query == nil, components.fragment == nil,
              let url = components.url
        else { throw .invalidBaseURL(value) }
        return url
    }
}
