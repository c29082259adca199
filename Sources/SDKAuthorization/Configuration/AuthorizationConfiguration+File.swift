import Foundation

extension AuthorizationConfiguration {
    /// The formats a configuration file may have.
    public enum FileFormat: Sendable {
        /// A JSON object.
        case json
        /// An XML or binary property list whose root is a dictionary.
        case propertyList
    }

    /// The keys a configuration file may hold.
    ///
    /// | key | type | |
    /// | --- | --- | --- |
    /// | `projectToken` | string | required |
    /// | `baseURL` | string | required, `http`/`https` |
    /// | `authorization` | string | `Token <key>`, `Bearer <jwt>` or a bare key |
    /// | `advancedAuthEnabled` | boolean | default `false` |
    /// | `providerConvention` | string | `implicitName` (default) or `registeredClass` |
    /// | `providerName` | string | the provider's name or module-qualified class name |
    /// | `customerTokenCacheLeeway` | number | seconds; turns the opt-in token cache on |
    public static let fileKeys: Set<String> = [
        "projectToken", "baseURL", "authorization", "advancedAuthEnabled",
        "providerConvention", "providerName", "customerTokenCacheLeeway",
    ]

    /// Reads a configuration file; the format comes from the extension (`.json`, `.plist`), or from
    /// the content when the extension is neither.
    ///
    /// - Throws: ``ConfigurationError`` for an unreadable or malformed file, an unknown key, a value
    ///   of the wrong type and every bad value ``init(projectToken:baseURL:authorization:advancedAuthEnabled:providerLookup:customerTokenCaching:)`` refuses.
    public init(contentsOf url: URL) throws(ConfigurationError) {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw .unreadableFile(path: url.path, reason: (error as NSError).localizedDescription)
        }
        let format: FileFormat
        switch url.pathExtension.lowercased() {
        case "json": format = .json
        case "plist": format = .propertyList
        default: format = Self.sniffFormat(data)
        }
        try self.init(data: data, format: format)
    }

    /// Reads a configuration from the bytes of a file in `format`.
    public init(data: Data, format: FileFormat) throws(ConfigurationError) {
        let values: [String: JWTClaimValue]
        do {
            switch format {
            case .json: values = try JSONDecoder().decode([String: JWTClaimValue].self, from: data)
            case .propertyList: values = try PropertyListDecoder().decode([String: JWTClaimValue].self, from: data)
            }
        } catch {
            throw .malformedFile(reason: format == .json
                ? "expected a JSON object of configuration keys"
                : "expected a property list whose root is a dictionary of configuration keys")
        }
        let unknown = Set(values.keys).subtracting(Self.fileKeys)
        guard unknown.isEmpty else { throw .unknownKeys(unknown.sorted()) }

        let lookup: ProviderLookup
        let name = try Self.string(values, "providerName")
        switch try Self.string(values, "providerConvention") ?? "implicitName" {
        case "implicitName": lookup = .implicitName(name ?? ProviderLookup.defaultImplicitName)
        case "registeredClass": lookup = .registeredClassName(name)
        default:
            throw .invalidValue(key: "providerConvention", reason: "expected 'implicitName' or 'registeredClass'")
        }
        let caching: CustomerTokenCaching
        switch values["customerTokenCacheLeeway"] {
        case nil: caching = .disabled
        case .number(let seconds)?: caching = .honoringExpiry(leeway: seconds)
        default: throw .wrongType(key: "customerTokenCacheLeeway", expected: "a number of seconds")
        }
        let advanced: Bool
        switch values["advancedAuthEnabled"] {
        case nil: advanced = false
        case .bool(let flag)?: advanced = flag
        default: throw .wrongType(key: "advancedAuthEnabled", expected: "a boolean")
        }
        guard let projectToken = try Self.string(values, "projectToken") else { throw .missingKey("projectToken") }
        guard let baseURL = try Self.string(values, "baseURL") else { throw .missingKey("baseURL") }
        try self.init(
            projectToken: projectToken,
            baseURL: baseURL,
            authorization: try Self.string(values, "authorization"),
            advancedAuthEnabled: advanced,
            providerLookup: lookup,
            customerTokenCaching: caching
        )
    }

    private static func string(_ values: [String: JWTClaimValue], _ key: String) throws(ConfigurationError) -> String? {
        switch values[key] {
        case nil: return nil
        case .string(let value)?: return value
        default: throw .wrongType(key: key, expected: "a string")
        }
    }

    private static func sniffFormat(_ data: Data) -> FileFormat {
        let head = data.prefix(8)
        if head.starts(with: Data("bplist".utf8)) || head.starts(with: Data("<?xml".utf8)) { return .propertyList }
        return .json
    }
}
