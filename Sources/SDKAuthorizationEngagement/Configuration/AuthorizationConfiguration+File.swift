import Foundation
import SDKAuthorization

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
    /// | `authorizationToken` | string | the Flutter SDK's spelling of `authorization`; a file names one or the other |
    /// | `advancedAuthEnabled` | boolean | default `false` |
    /// | `providerConvention` | string | `implicitName` (default) or `registeredClass` |
    /// | `providerName` | string | the provider's name or module-qualified class name |
    /// | `customerTokenCacheLeeway` | number | seconds (0 to 86400); turns the opt-in token cache on |
    /// | `customerTokenCacheMaximumAge` | number | seconds (1 to 86400, default 3600); needs the leeway |
    /// | `signatureAuthenticationEnabled` | boolean | default `true`; only with `providerName` `SDKAuthorization.Signature`: `false` sends no signature |
    /// | `EnableSDKAuthentication` | boolean | Braze's spelling of `signatureAuthenticationEnabled`; a file names one or the other |
    /// | `tokenExchangeURL` | string | required with, and only with, `providerName` `SDKAuthorization.TokenExchange`; `https` (`http` on a loopback host only), no user info, query or fragment |
    ///
    /// The modes chosen by name are listed in ``BuiltInProviderName``. A key a file names but its
    /// mode does not read is refused, never ignored.
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
              meaning: "The provider's registered name or module-qualified class name, or a built-in mode (`SDKAuthorization.IDTokenRefresh`, `SDKAuthorization.Signature`, `SDKAuthorization.TokenExchange`)."),
        .init(name: "customerTokenCacheLeeway", type: "number", defaultValue: "none (no cache)",
              meaning: "Seconds (0 to 86400) before a customer token's `exp` that it stops being reused; turns the opt-in token cache on."),
        .init(name: "customerTokenCacheMaximumAge", type: "number", defaultValue: "`3600`",
              meaning: "Seconds (1 to 86400) a cached customer token is reused at most, whatever its `exp`; only with `customerTokenCacheLeeway`."),
        .init(name: "signatureAuthenticationEnabled", type: "boolean", defaultValue: "`true`",
              meaning: "Only with `providerName` `SDKAuthorization.Signature`: `false` keeps the mode but sends no signature.",
              vendorSpellings: [("EnableSDKAuthentication", "Braze")]),
        .init(name: "tokenExchangeURL", type: "string", defaultValue: "none",
              meaning: "Required with, and only with, `providerName` `SDKAuthorization.TokenExchange`: where signed payloads are exchanged; `https` (`http` on a loopback host only), no user info, query or fragment."),
    ]

    /// The largest configuration file read, in bytes (64 KB). A file is read no further than this,
    /// and a larger one fails with `ConfigurationError.fileTooLarge(limit:)`.
    public static let maximumFileSize = 65_536

    /// Reads a configuration file; the format comes from the extension (`.json`, `.plist`), or from
    /// the content when the extension is neither.
    ///
    /// Files are untrusted input: the path must name a regular file itself (a symbolic link, a
    /// directory, a FIFO or a device is refused without waiting on it), its size is checked before
    /// it is read, at most ``maximumFileSize`` bytes are read, JSON is read in one bounded pass that
    /// refuses a repeated key, and a property list is checked for its size and shape (one
    /// dictionary of plain values) before it is parsed.
    ///
    /// - Throws: `ConfigurationError` for an unreadable or malformed file, an unknown key, a value
    ///   of the wrong type, a built-in mode's key in a file that chooses another mode (or a mode
    ///   without the key it needs), and every bad value ``init(projectToken:baseURL:authorization:advancedAuthEnabled:providerLookup:customerTokenCaching:signatureAuthenticationEnabled:tokenExchangeURL:)-(_,_,String?,_,_,_,_,_)`` refuses.
    public init(contentsOf url: URL) throws(ConfigurationError) {
        let data: Data
        do {
            data = try ExternalFile.read(atPath: url.path, limit: Self.maximumFileSize)
        } catch .tooLarge {
            throw .fileTooLarge(limit: Self.maximumFileSize)
        } catch {
            throw .unreadableFile(path: url.path, reason: error.reason)
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
        guard data.count <= Self.maximumFileSize else { throw .fileTooLarge(limit: Self.maximumFileSize) }
        let values: [String: JWTClaimValue]
        switch format {
        case .json: values = try Self.jsonValues(data)
        case .propertyList: values = try Self.propertyListValues(data)
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
        switch (values["customerTokenCacheLeeway"], values["customerTokenCacheMaximumAge"]) {
        case (nil, nil): caching = .disabled
        case (nil, _?):
            throw .invalidValue(key: "customerTokenCacheMaximumAge", reason: "it applies only with customerTokenCacheLeeway, which turns the cache on")
        case (.number(let seconds)?, nil): caching = .honoringExpiry(leeway: seconds)
        case (.number(let seconds)?, .number(let maximumAge)?): caching = .honoringExpiry(leeway: seconds, maximumAge: maximumAge)
        case (.number?, _?): throw .wrongType(key: "customerTokenCacheMaximumAge", expected: "a number of seconds")
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
        let (signatureEnabled, exchangeURL) = try Self.modeSettings(values, providerName: name)
        try self.init(
            projectToken: projectToken,
            baseURL: baseURL,
            authorization: authorization,
            advancedAuthEnabled: advanced,
            providerLookup: lookup,
            customerTokenCaching: caching,
            signatureAuthenticationEnabled: signatureEnabled,
            tokenExchangeURL: exchangeURL
        )
    }

    /// The keys of the built-in modes chosen by name: each only with its own mode, so a key the
    /// configuration would ignore is refused instead, and every error names the key as written.
    private static func modeSettings(_ values: [String: JWTClaimValue], providerName: String?) throws(ConfigurationError) -> (Bool, String?) {
        // Braze's Info.plist spells the signature flag `EnableSDKAuthentication`; one file names one of the two.
        if values["signatureAuthenticationEnabled"] != nil, values["EnableSDKAuthentication"] != nil {
            throw .invalidValue(key: "EnableSDKAuthentication", reason: "the file also names signatureAuthenticationEnabled; EnableSDKAuthentication is Braze's spelling of the same key, keep one")
        }
        let signatureKey = values["EnableSDKAuthentication"] != nil ? "EnableSDKAuthentication" : "signatureAuthenticationEnabled"
        var signatureEnabled = true
        switch values[signatureKey] {
        case nil: break
        case .bool(let flag)?: signatureEnabled = flag
        default: throw .wrongType(key: signatureKey, expected: "a boolean")
        }
        if values[signatureKey] != nil, providerName != BuiltInProviderName.signature {
            throw .invalidValue(key: signatureKey, reason: "it applies only to the signature mode; set providerName to \(BuiltInProviderName.signature) or remove it")
        }
        let exchangeURL = try string(values, "tokenExchangeURL")
        if exchangeURL != nil, providerName != BuiltInProviderName.tokenExchange {
            throw .invalidValue(key: "tokenExchangeURL", reason: "it applies only to the token-exchange mode; set providerName to \(BuiltInProviderName.tokenExchange) or remove it")
        }
        if exchangeURL == nil, providerName == BuiltInProviderName.tokenExchange { throw .missingKey("tokenExchangeURL") }
        return (signatureEnabled, exchangeURL)
    }

    private static func string(_ values: [String: JWTClaimValue], _ key: String) throws(ConfigurationError) -> String? {
        switch values[key] {
        case nil: return nil
        case .string(let value)?: return value
        default: throw .wrongType(key: key, expected: "a string")
        }
    }

    private static let jsonShape = "expected a JSON object of configuration keys"
    private static let propertyListShape = "expected a property list whose root is a dictionary of configuration keys with plain values"

    private static func jsonValues(_ data: Data) throws(ConfigurationError) -> [String: JWTClaimValue] {
        do {
            guard case .object(let values) = try BoundedJSONReader.parse(data, maximumDepth: 4) else {
                throw ConfigurationError.malformedFile(reason: jsonShape)
            }
            return values
        } catch let error as ConfigurationError {
            throw error
        } catch BoundedJSONReader.Failure.duplicateKey(let key) {
            throw .duplicateKey(key)
        } catch {
            throw .malformedFile(reason: jsonShape)
        }
    }

    /// A configuration value as a property list holds it: plain values only.
    private enum PropertyListScalar: Decodable {
        case string(String), number(Double), bool(Bool), other

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            // Each attempt fails at once on a mismatch; nothing below a container is decoded.
            if let value = try? container.decode(Bool.self) {
                self = .bool(value)
            } else if let value = try? container.decode(Double.self) {
                self = .number(value)
            } else if let value = try? container.decode(String.self) {
                self = .string(value)
            } else {
                self = .other
            }
        }

        var value: JWTClaimValue {
            switch self {
            case .string(let value): .string(value)
            case .number(let value): .number(value)
            case .bool(let value): .bool(value)
            case .other: .array([])
            }
        }
    }

    /// Checks the shape before any parser sees the bytes, so no nesting can overflow the stack:
    /// an XML property list holds one `<dict>` and no `<array>`, and no `<key>` twice; a binary one
    /// holds at most 64 objects.
    private static func propertyListValues(_ data: Data) throws(ConfigurationError) -> [String: JWTClaimValue] {
        let bytes = [UInt8](data)
        if bytes.starts(with: Array("bplist".utf8)) {
            guard let objects = binaryPropertyListObjectCount(bytes), objects <= 64 else {
                throw .malformedFile(reason: propertyListShape)
            }
        } else {
            guard occurrences(of: "<dict", in: bytes) <= 1, occurrences(of: "<array", in: bytes) == 0 else {
                throw .malformedFile(reason: propertyListShape)
            }
            var seen = Set<String>()
            for key in elementTexts("key", in: bytes) where !seen.insert(key).inserted {
                throw .duplicateKey(key)
            }
        }
        do {
            return try PropertyListDecoder().decode([String: PropertyListScalar].self, from: data).mapValues(\.value)
        } catch {
            throw .malformedFile(reason: propertyListShape)
        }
    }

    /// How many times `needle` occurs in `bytes` (a linear scan).
    private static func occurrences(of needle: String, in bytes: [UInt8]) -> Int {
        let pattern = Array(needle.utf8)
        guard bytes.count >= pattern.count else { return 0 }
        var count = 0
        for start in 0...(bytes.count - pattern.count) where bytes[start] == pattern[0] {
            if bytes[start..<(start + pattern.count)].elementsEqual(pattern) { count += 1 }
        }
        return count
    }

    /// The texts of every `<name>...</name>` element, in order.
    private static func elementTexts(_ name: String, in bytes: [UInt8]) -> [String] {
        let text = String(decoding: bytes, as: UTF8.self)
        return text.components(separatedBy: "<\(name)>").dropFirst().compactMap { $0.components(separatedBy: "</\(name)>").first }
    }

    /// The object count from a binary property list's 32-byte trailer, or nil when there is none.
    private static func binaryPropertyListObjectCount(_ bytes: [UInt8]) -> UInt64? {
        guard bytes.count >= 40 else { return nil }
        let start = bytes.count - 24
        return bytes[start..<(start + 8)].reduce(0) { $0 << 8 | UInt64($1) }
    }

    private static func sniffFormat(_ data: Data) -> FileFormat {
        let head = data.prefix(8)
        if head.starts(with: Data("bplist".utf8)) || head.starts(with: Data("<?xml".utf8)) { return .propertyList }
        return .json
    }
}
