import Foundation
import SDKAuthorization
import SDKAuthorizationModeKit

extension AuthorizationConfiguration {
    /// The formats a configuration file may have: the mode kit's, as every configuration reads them.
    public typealias FileFormat = ConfigurationFile.Format

    /// The Engagement keys a configuration file may hold, besides the keys of the modes registered
    /// with the registry that reads it (`ProviderRegistry.modeSettingKeys`).
    ///
    /// | key | type | |
    /// | --- | --- | --- |
    /// | `projectToken` | string | required |
    /// | `baseURL` | string | required, `http`/`https` |
    /// | `authorization` | string | `Token <key>`, `Bearer <jwt>` or a bare key |
    /// | `authorizationToken` | string | the Flutter SDK's spelling of `authorization`; a file names one or the other |
    /// | `advancedAuthEnabled` | boolean | default `false` |
    /// | `providerConvention` | string | `implicitName` (default) or `registeredClass` |
    /// | `providerName` | string | the provider's name or module-qualified class name, or a registered mode's name |
    /// | `customerTokenCacheLeeway` | number | seconds (0 to 86400); turns the opt-in token cache on |
    /// | `customerTokenCacheMaximumAge` | number | seconds (1 to 86400, default 3600); needs the leeway |
    ///
    /// A mode's key is accepted only when the mode is registered, and only in a file that chooses
    /// that mode: a key the configuration would ignore is refused, never ignored.
    public static let fileKeys: Set<String> = Set(fileKeyDescriptors.flatMap { [$0.name] + $0.vendorSpellings.map(\.key) })

    /// One key a configuration file may hold: what the reader accepts (``fileKeys``) and what the
    /// README's table of keys says, which a test renders from this list.
    struct FileKeyDescriptor: Sendable {
        let name: String
        let type: String
        let defaultValue: String
        let meaning: String
        /// The same key as a vendor SDK spells it; a file names one spelling or the other.
        var vendorSpellings: [(key: String, vendor: String)] = []
    }

    /// Every key a configuration file may hold, in the order the README lists them.
    static let fileKeyDescriptors: [FileKeyDescriptor] = [
        .init(name: "projectToken", type: "string", defaultValue: "required",
              meaning: "The Engagement project's token, put into the catalogue's endpoint paths."),
        .init(name: "baseURL", type: "string", defaultValue: "required",
              meaning: "The API's base URL: `http` or `https`, a host, no user info, query or fragment."),
        .init(name: "authorization", type: "string", defaultValue: "none (required to start a client)",
              meaning: "The project credential for the API-key endpoints: `Token <key>`, `Bearer <jwt>` or a bare key; `Basic` is refused.",
              vendorSpellings: [("authorizationToken", "Exponea Flutter SDK")]),
        .init(name: "advancedAuthEnabled", type: "boolean", defaultValue: "`false`",
              meaning: "Sends the customer token from the provider on the customer-token endpoints; off, no provider is looked up."),
        .init(name: "providerConvention", type: "string", defaultValue: "`implicitName`",
              meaning: "How the provider is found by name: `implicitName` (the iOS convention) or `registeredClass` (the Android convention)."),
        .init(name: "providerName", type: "string", defaultValue: "`ExponeaAuthProvider` with `implicitName`",
              meaning: "The provider's registered name or module-qualified class name, or a registered mode's name (`SDKAuthorization.IDTokenRefresh`, `SDKAuthorization.Signature`, `SDKAuthorization.TokenExchange`)."),
        .init(name: "customerTokenCacheLeeway", type: "number", defaultValue: "none (no cache)",
              meaning: "Seconds (0 to 86400) before a customer token's `exp` that it stops being reused; turns the opt-in token cache on."),
        .init(name: "customerTokenCacheMaximumAge", type: "number", defaultValue: "`3600`",
              meaning: "Seconds (1 to 86400) a cached customer token is reused at most, whatever its `exp`; only with `customerTokenCacheLeeway`."),
    ]

    /// The largest configuration file read, in bytes (64 KB): the mode kit's
    /// `ConfigurationFile.maximumSize`. A file is read no further than this, and a larger one fails
    /// with `ConfigurationError.fileTooLarge(limit:)`.
    public static let maximumFileSize = ConfigurationFile.maximumSize

    /// Reads a configuration file; the format comes from the extension (`.json`, `.plist`), or from
    /// the content when the extension is neither.
    ///
    /// Files are untrusted input: the path must name a regular file itself (a symbolic link, a
    /// directory, a FIFO or a device is refused without waiting on it), its size is checked before
    /// it is read, at most ``maximumFileSize`` bytes are read, JSON is read in one bounded pass that
    /// refuses a repeated key, and a property list is checked for its size and shape (one
    /// dictionary of plain values) before it is parsed.
    ///
    /// The file may hold the Engagement keys (``fileKeys``) and the keys of the modes registered
    /// with `registry` (`ProviderRegistry.modeSettingKeys`), each under its name or a vendor's
    /// spelling, and a vendor's dictionary (Braze's `Braze`) holding a registered mode's keys.
    /// `EnableSDKAuthentication` true in a `Braze` dictionary chooses the signature mode, as
    /// Braze's integration guide says; without it the mode stays off and ``notes`` says so.
    ///
    /// - Parameters:
    ///   - url: The file.
    ///   - registry: The registry whose modes' keys the file may hold; default none.
    /// A file may start with a UTF-8 byte-order mark, which is skipped (as the provider manifest's
    /// reader skips it).
    ///
    /// - Throws: `ConfigurationError` for an unreadable or malformed file, an unknown key (the
    ///   error names the file and the key, and says which key it may mean, or which mode to
    ///   register), keys of a mode that `providerName` chooses but the registry does not hold
    ///   (`ConfigurationError.Code.modeNotRegistered`, naming the mode), a value of the wrong type
    ///   or outside its key's range, a mode's key in a file that chooses another mode (or a mode
    ///   without the key it needs), a mode's key with `advancedAuthEnabled` absent or false (no
    ///   provider would be made, so the key would be ignored), and every bad value ``init(projectToken:baseURL:authorization:advancedAuthEnabled:providerLookup:customerTokenCaching:modeSettings:)-(_,_,String?,_,_,_,_)`` refuses.
    public init(contentsOf url: URL, registry: ProviderRegistry = ProviderRegistry()) throws(ConfigurationError) {
        try self.init(file: ConfigurationFile(contentsOf: url), registry: registry)
    }

    /// Reads a configuration from the bytes of a file in `format`, as ``init(contentsOf:registry:)`` does.
    public init(data: Data, format: FileFormat, registry: ProviderRegistry = ProviderRegistry()) throws(ConfigurationError) {
        try self.init(file: ConfigurationFile(data: data, format: format), registry: registry)
    }

    private init(file configurationFile: ConfigurationFile, registry: ProviderRegistry) throws(ConfigurationError) {
        let file = SourceFile(name: configurationFile.name, path: configurationFile.path)
        let values = configurationFile.values
        try registry.checkEngagementRegistrations()
        // The kit reads the registered modes' keys: every key neither Engagement's nor a registered
        // mode's is refused, and a value of a mode's key that its type, range or validation refuses
        // names the file.
        let modes = try ConfigurationFile.Modes(of: configurationFile, registry: registry, modeKey: "providerName",
                                                schemaKeys: Self.fileKeys, otherModes: BuiltInProviderName.modes)

        let lookup: ProviderLookup
        var name = try Self.string(values, "providerName")
        var advanced: Bool
        switch values["advancedAuthEnabled"] {
        case nil: advanced = false
        case .bool(let flag)?: advanced = flag
        default: throw .wrongType(key: "advancedAuthEnabled", expected: "a boolean")
        }
        // The vendor's switch chooses the mode, as the vendor's own file does (a providerName naming
        // another mode is refused).
        let chosen = try modes.switchedOn(naming: name)
        if let (mode, spelling) = chosen {
            if values["advancedAuthEnabled"] == .bool(false) {
                throw .invalidValue(key: spelling, reason: "it turns on the mode \(mode), which sends customer tokens, but advancedAuthEnabled is false; keep one")
            }
            name = mode
            advanced = true
        }
        switch try Self.string(values, "providerConvention") ?? "implicitName" {
        case "implicitName": lookup = .implicitName(name ?? ProviderLookup.defaultImplicitName)
        case "registeredClass": lookup = .registeredClassName(name)
        default:
            throw .invalidValue(key: "providerConvention", reason: "expected 'implicitName' or 'registeredClass'")
        }
        let caching: CustomerTokenCaching
        switch (values["customerTokenCacheLeeway"], values["customerTokenCacheMaximumAge"]) {
        case (nil, nil): caching = .disabled
        case (nil, _?):
            throw .invalidValue(key: "customerTokenCacheMaximumAge", reason: "it applies only with customerTokenCacheLeeway, which turns the cache on")
        case (.number(let seconds)?, nil): caching = .honoringExpiry(leeway: seconds)
        case (.number(let seconds)?, .number(let maximumAge)?): caching = .honoringExpiry(leeway: seconds, maximumAge: maximumAge)
        case (.number?, _?): throw .wrongType(key: "customerTokenCacheMaximumAge", expected: "a number of seconds")
        default: throw .wrongType(key: "customerTokenCacheLeeway", expected: "a number of seconds")
        }
        guard let projectToken = try Self.string(values, "projectToken") else { throw ConfigurationError.missingKey("projectToken").placed(in: file) }
        guard let baseURL = try Self.string(values, "baseURL") else { throw ConfigurationError.missingKey("baseURL").placed(in: file) }
        // The Flutter SDK spells the key `authorizationToken`; one file names one of the two.
        if values["authorization"] != nil, values["authorizationToken"] != nil {
            throw .invalidValue(key: "authorizationToken", reason: "the file also names authorization; authorizationToken is the Flutter SDK's spelling of the same key, keep one")
        }
        var authorization = try Self.string(values, "authorization")
        if authorization == nil, let flutterValue = try Self.string(values, "authorizationToken") {
            // Checked here first, so an error names the key the file wrote.
            do throws(ConfigurationError) {
                _ = try Self.checkedAuthorization(flutterValue)
            } catch where error.key == "authorization" {
                throw error.code == .surroundingWhitespace
                    ? .surroundingWhitespace(key: "authorizationToken")
                    : .invalidValue(key: "authorizationToken", reason: error.reason ?? "")
            }
            authorization = flutterValue
        }
        // No provider is made without advanced auth: a mode's key the file sets would be ignored.
        if !advanced, let name, let ignored = modes.keysGiven(to: name).first {
            throw ConfigurationError.keyIgnoredWithoutAdvancedAuth(ignored, mode: name).placed(in: file)
        }
        // A mode that is off needs none of its keys, and carries no default; another mode's key is
        // still refused.
        let settings = try modes.settings(for: advanced ? name : nil)
        try self.init(
            projectToken: projectToken,
            baseURL: baseURL,
            authorization: authorization,
            advancedAuthEnabled: advanced,
            providerLookup: lookup,
            customerTokenCaching: caching,
            modeSettings: settings
        )
        notes = chosen == nil ? modes.notes(for: name) : []
        sourceFile = file
    }

    private static func string(_ values: [String: JWTClaimValue], _ key: String) throws(ConfigurationError) -> String? {
        switch values[key] {
        case nil: return nil
        case .string(let value)?: return value
        default: throw .wrongType(key: key, expected: "a string")
        }
    }
}
