import Foundation
import SDKAuthorization
import SDKAuthorizationModeKit

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
    /// Reuse a token until its JWT `exp` is less than `leeway` seconds away, and never longer than
    /// `maximumAge` seconds (default one hour) whatever `exp` says; tokens without a readable `exp`
    /// are never cached. The cache is dropped on identity change and on rejection.
    case honoringExpiry(leeway: TimeInterval, maximumAge: TimeInterval = CachingAuthorizationProvider.defaultMaximumAge)
}

/// Everything an SDK needs to authorize its calls to one project.
///
/// Build it in code or read it from a JSON or property-list file
/// (``init(contentsOf:registry:)``). Every value is checked when it is set, so a configuration that exists
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
public struct AuthorizationConfiguration: Sendable, Equatable, CustomStringConvertible, CustomReflectable {
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
    /// The settings of the mode the configuration chooses, under the keys the mode declares
    /// (`NamedProviderFactory.settingKeys`): `tokenExchangeURL` for the token-exchange mode, say.
    /// The registry checks them against the chosen mode's keys when a client starts (a file's are
    /// checked as it is read); a provider that is not a mode takes none.
    public var modeSettings: ModeSettings
    /// What reading a file found that is no error but worth telling the developer: a vendor's
    /// switch that leaves a mode off (a `Braze` dictionary without `EnableSDKAuthentication` true
    /// leaves the signature mode off). Empty for a configuration made in code; the authorization
    /// doctor shows each as a note.
    public internal(set) var notes: [String] = []
    /// The file the configuration was read from, if any: errors at start name it.
    var sourceFile = SourceFile()

    /// Where a configuration was read from. Not part of its value: two configurations that say the
    /// same are equal wherever they were read from.
    struct SourceFile: Sendable, Equatable {
        /// The file's name, as errors show it (`authorization.json`).
        var name: String?
        /// The file's path, as the error's `path` carries it.
        var path: String?

        static func == (lhs: SourceFile, rhs: SourceFile) -> Bool { true }
    }

    /// Creates a configuration, checking every value.
    ///
    /// - Parameters:
    ///   - projectToken: The project token; must not be empty.
    ///   - baseURL: An absolute `http`/`https` URL with a host.
    ///   - authorization: `Token <key>`, `Bearer <jwt>`, a bare API key, or `nil`.
    ///   - advancedAuthEnabled: Whether customer tokens are used.
    ///   - providerLookup: How the provider is found (default: the name `ExponeaAuthProvider`).
    ///   - customerTokenCaching: Opt-in token cache (default: disabled).
    ///   - modeSettings: The chosen mode's settings (default none), checked against its keys
    ///     when a client starts: `ModeSettings(["tokenExchangeURL": .url(exchangeURL)])`.
    /// - Throws: `ConfigurationError` naming the first bad value.
    public init(
        projectToken: String,
        baseURL: String,
        authorization: String?,
        advancedAuthEnabled: Bool = false,
        providerLookup: ProviderLookup = .default,
        customerTokenCaching: CustomerTokenCaching = .disabled,
        modeSettings: ModeSettings = ModeSettings()
    ) throws(ConfigurationError) {
        guard !projectToken.isEmpty, !projectToken.allSatisfy(\.isWhitespace) else { throw .emptyProjectToken }
        guard HeaderFieldRules.check(projectToken) != .forbiddenCharacters else {
            throw .credentialContainsControlCharacters(field: "projectToken")
        }
        guard projectToken.trimmingCharacters(in: .whitespaces) == projectToken else { throw .surroundingWhitespace(key: "projectToken") }
        guard projectToken != ".", projectToken != ".." else {
            throw .invalidValue(key: "projectToken", reason: "'.' and '..' would change the path the token is substituted into")
        }
        self.projectToken = projectToken
        self.baseURL = try Self.checkedBaseURL(baseURL)
        self.authorization = try authorization.map { (value) throws(ConfigurationError) in try Self.checkedAuthorization(value) }
        self.advancedAuthEnabled = advancedAuthEnabled
        switch providerLookup {
        case .implicitName(let name), .registeredClassName(let name?):
            try Self.checkProviderName(name)
        case .registeredClassName(nil):
            break
        }
        self.providerLookup = providerLookup
        if case .honoringExpiry(let leeway, let maximumAge) = customerTokenCaching {
            guard leeway.isFinite, (0...AuthorizationOptions.maximumSeconds).contains(leeway) else {
                throw .invalidValue(key: "customerTokenCacheLeeway", reason: "the leeway must be a number of seconds from 0 to \(Int(AuthorizationOptions.maximumSeconds))")
            }
            guard maximumAge.isFinite, (1...AuthorizationOptions.maximumSeconds).contains(maximumAge) else {
                throw .invalidValue(key: "customerTokenCacheMaximumAge", reason: "the maximum age must be a number of seconds from 1 to \(Int(AuthorizationOptions.maximumSeconds))")
            }
        }
        self.customerTokenCaching = customerTokenCaching
        self.modeSettings = modeSettings
    }

    /// Creates a configuration with the project credential written as Exponea's iOS SDK writes it:
    /// `authorization: .token("YOUR_API_KEY")` or `.bearer(jwt)`, inside the one `try`.
    ///
    /// ```swift
    /// let configuration = try AuthorizationConfiguration(
    ///     projectToken: "YOUR_PROJECT_TOKEN",
    ///     baseURL: "https://api.exponea.com",
    ///     authorization: .token("YOUR_API_KEY")
    /// )
    /// ```
    ///
    /// Every other parameter is that of the initializer taking `authorization: String?` (`"Token <key>"`),
    /// which `authorization: nil` (Exponea's `.none`) also picks.
    ///
    /// - Throws: `ConfigurationError` naming the first bad value, as that initializer does.
    public init(
        projectToken: String,
        baseURL: String,
        authorization: ProjectAuthorization,
        advancedAuthEnabled: Bool = false,
        providerLookup: ProviderLookup = .default,
        customerTokenCaching: CustomerTokenCaching = .disabled,
        modeSettings: ModeSettings = ModeSettings()
    ) throws(ConfigurationError) {
        try self.init(projectToken: projectToken, baseURL: baseURL, authorization: authorization.headerValue,
                      advancedAuthEnabled: advancedAuthEnabled, providerLookup: providerLookup, customerTokenCaching: customerTokenCaching,
                      modeSettings: modeSettings)
    }

    /// Every value, the credential redacted.
    public var description: String {
        "AuthorizationConfiguration(projectToken: \(LogText.escaped(projectToken, limit: 64)), baseURL: \(LogText.url(baseURL)), authorization: \(authorization?.description ?? "none"), advancedAuthEnabled: \(advancedAuthEnabled), providerLookup: \(providerLookup), customerTokenCaching: \(customerTokenCaching)\(Self.describe(modeSettings)))"
    }

    /// The mode settings as the description shows them: switches and URLs (redacted as in logs);
    /// text only by its length, since a mode's text may be a secret.
    private static func describe(_ settings: ModeSettings) -> String {
        settings.values.keys.sorted().map { key in
            let value = switch settings.values[key]! {
            case .bool(let flag): "\(flag)"
            case .url(let url): LogText.url(url)
            case .string(let text): "<\(text.count) characters>"
            case .number(let number): "\(number)"
            case .integer(let number): "\(number)"
            }
            let plain = key.utf8.count <= 64 && key.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_") }
            return ", \(plain ? key : LogText.escaped(key, limit: 64)): \(value)"
        }.joined()
    }

    public var customMirror: Mirror { Mirror(self, children: ["description": description], displayStyle: .struct) }

    /// Checks `name` as a configuration's `providerName` is checked: a type name, possibly
    /// module-qualified, nested or generic (`MyApp.Outer.Provider<Swift.Int>`), or a mode's name
    /// (`SDKAuthorization.Signature`); letters, digits, `_`, `.`, `<`, `>`, `,` and spaces, no
    /// surrounding white space, at most `ConfigurationError.maximumProviderNameLength` (256) Unicode
    /// scalars, the length the lookup messages repeat whole.
    ///
    /// A tool that takes provider names from elsewhere checks them with it, so it accepts exactly
    /// the names a configuration accepts: the build-time provider registration
    /// (`sdkauth-register-providers`) checks a manifest's names, the authorization doctor a mode
    /// description's.
    ///
    /// - Throws: `ConfigurationError` about the key `providerName`: empty, surrounded by white
    ///   space, or not a type name.
    public static func checkProviderName(_ name: String) throws(ConfigurationError) {
        guard !name.allSatisfy(\.isWhitespace) else {
            throw .invalidValue(key: "providerName", reason: "the provider name must not be empty")
        }
        guard name.trimmingCharacters(in: .whitespaces) == name else { throw .surroundingWhitespace(key: "providerName") }
        let allowed = name.unicodeScalars.allSatisfy { scalar in
            scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "_.<>, ".unicodeScalars.contains(scalar)
        }
        guard allowed, name.unicodeScalars.count <= ConfigurationError.maximumProviderNameLength else {
            throw .invalidValue(key: "providerName", reason: "\(LogText.escaped(name, limit: 64)) is not a type name")
        }
    }

    /// The project authorization `value`; errors name the key `authorization`.
    static func checkedAuthorization(_ value: String) throws(ConfigurationError) -> ProjectAuthorization {
        // Blank values, a lone scheme word and `Basic` get their own errors from the parser.
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        let word = trimmed.lowercased()
        let hasOwnError = word.isEmpty || word == "token" || word == "bearer" || word.hasPrefix("basic")
        guard hasOwnError || trimmed == value else { throw .surroundingWhitespace(key: "authorization") }
        return try ProjectAuthorization(parsing: value)
    }

    /// An absolute `http`/`https` URL with a host (a host name, an IPv4 or a bracketed IPv6
    /// literal, without percent escapes), and no user info, query, fragment or surrounding white
    /// space. The error never repeats a password or a query.
    static func checkedBaseURL(_ value: String) throws(ConfigurationError) -> URL {
        guard value.trimmingCharacters(in: .whitespaces) == value else { throw .surroundingWhitespace(key: "baseURL") }
        guard HeaderFieldRules.check(value) == .valid,
              let components = URLComponents(string: value),
              let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = components.host, !host.isEmpty,
              components.query == nil, components.fragment == nil,
              let url = components.url
        else { throw .invalidBaseURL(ConfigurationError.sanitizedURLText(value)) }
        // A host name, IPv4 or IPv6 literal without percent escapes: anything else has no origin,
        // and the catalogue's endpoints would never be recognised by URL.
        guard HostName.host(of: url) != nil else { throw .invalidBaseURL(ConfigurationError.sanitizedURLText(value)) }
        guard components.user == nil, components.password == nil else {
            throw .invalidValue(key: "baseURL", reason: "user info ('user:password@') is not allowed in \(ConfigurationError.sanitizedURLText(value)); it would send Basic authentication")
        }
        return url
    }
}
