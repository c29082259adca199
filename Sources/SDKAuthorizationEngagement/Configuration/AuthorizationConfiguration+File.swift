import Foundation
import SDKAuthorization
import SDKAuthorizationModeKit

extension AuthorizationConfiguration {
    /// The formats a configuration file may have.
    public enum FileFormat: Sendable {
        /// A JSON object.
        case json
        /// An XML or binary property list whose root is a dictionary.
        case propertyList
    }

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
        try self.init(data: data, format: format, registry: registry, file: SourceFile(name: url.lastPathComponent, path: url.path))
    }

    /// Reads a configuration from the bytes of a file in `format`, as ``init(contentsOf:registry:)`` does.
    public init(data: Data, format: FileFormat, registry: ProviderRegistry = ProviderRegistry()) throws(ConfigurationError) {
        try self.init(data: data, format: format, registry: registry, file: SourceFile())
    }

    private init(data: Data, format: FileFormat, registry: ProviderRegistry, file: SourceFile) throws(ConfigurationError) {
        do throws(ConfigurationError) {
            self = try Self(data: data, format: format, registry: registry, source: file)
            sourceFile = file
        } catch where error.code == .missingKey {
            // A missing key names the file.
            throw error.placed(in: file)
        }
    }

    private init(data: Data, format: FileFormat, registry: ProviderRegistry, source file: SourceFile) throws(ConfigurationError) {
        guard data.count <= Self.maximumFileSize else { throw .fileTooLarge(limit: Self.maximumFileSize) }
        // A UTF-8 byte-order mark, as some editors save one, is skipped, as every reader of the
        // framework skips it (the provider manifest's and the mode description's too).
        let data = Self.droppingByteOrderMark(data)
        let fileName = file.name
        let values: [String: JWTClaimValue]
        switch format {
        case .json: values = try Self.jsonValues(data, file: file)
        case .propertyList:
            do throws(ConfigurationError) {
                values = try Self.propertyListValues(data)
            } catch where error.code == .malformedFile {
                throw error.placed(in: file)
            }
        }
        try registry.checkEngagementRegistrations()
        let described = registry.describedModes + BuiltInProviderName.modes
        let modeKeys = ModeKeys(registry.modeSettingKeys, described: described)
        // Keys no registered mode owns, none close to a known key, in a file whose providerName
        // names nothing registered: the mode they belong to is not registered, which "unknown key"
        // would not say. (A described mode's keys get their own hint: link and register the mode.)
        var unregisteredMode: String?
        if case .string(let name)? = values["providerName"], !described.contains(where: { $0.providerName == name }), !registry.resolves(name) {
            unregisteredMode = name
        }
        do throws(ConfigurationError) {
            try modeKeys.refuseUnknownKeys(in: values, fileName: fileName, unregisteredMode: unregisteredMode)
        } catch where error.code == .modeNotRegistered {
            throw error.placed(in: file)
        }
        // A value of a mode's key that its type, range or validation refuses names the file.
        let modes: ModeKeys.Read
        do throws(ConfigurationError) {
            modes = try modeKeys.read(values)
        } catch {
            throw error.placed(in: file)
        }

        let lookup: ProviderLookup
        var name = try Self.string(values, "providerName")
        var advanced: Bool
        switch values["advancedAuthEnabled"] {
        case nil: advanced = false
        case .bool(let flag)?: advanced = flag
        default: throw .wrongType(key: "advancedAuthEnabled", expected: "a boolean")
        }
        let chosen = try modes.chosen(providerName: name)
        if let (mode, spelling) = chosen {
            // The vendor's switch chooses the mode, as the vendor's own file does.
            if let name, name != mode {
                throw .invalidValue(key: spelling, reason: "it turns on the mode \(mode), but providerName names \(LogText.typeName(name)); keep one")
            }
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
        // No provider is made without advanced auth: a mode's key the file sets would be ignored.
        if !advanced, let name, let ignored = modes.keysGiven(to: name).first {
            throw ConfigurationError.keyIgnoredWithoutAdvancedAuth(ignored, mode: name).placed(in: file)
        }
        let settings: ModeSettings
        do throws(ConfigurationError) {
            // A mode that is off needs none of its keys, and carries no default; another mode's
            // key is still refused.
            settings = try modes.settings(forProviderName: advanced ? name : nil, keys: modeKeys)
        } catch where error.code != .missingKey {
            throw error.placed(in: file)
        }
        try self.init(
            projectToken: projectToken,
            baseURL: baseURL,
            authorization: authorization,
            advancedAuthEnabled: advanced,
            providerLookup: lookup,
            customerTokenCaching: caching,
            modeSettings: settings
        )
        notes = chosen == nil ? modes.offNotes(providerName: name) : []
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

    /// The file's keys; a malformed file's error names the file, and the line and column where
    /// reading stopped (of the first value, when the file is JSON but not an object).
    private static func jsonValues(_ data: Data, file: SourceFile) throws(ConfigurationError) -> [String: JWTClaimValue] {
        let malformed = ConfigurationError.malformedFile(reason: jsonShape)
        let value: JWTClaimValue
        do {
            value = try BoundedJSONReader.parse(data, maximumDepth: 4)
        } catch .duplicateKey(let key) {
            throw .duplicateKey(key)
        } catch .syntax(let offset) {
            let (line, column) = position(of: offset, in: data)
            throw malformed.placed(in: file, line: line, column: column)
        } catch {
            throw malformed.placed(in: file)
        }
        guard case .object(let values) = value else {
            let start = data.firstIndex { !(" \t\r\n".utf8.contains($0)) }.map { data.distance(from: data.startIndex, to: $0) } ?? 0
            let (line, column) = position(of: start, in: data)
            throw malformed.placed(in: file, line: line, column: column)
        }
        return values
    }

    /// The line and column (1-based; a column counts characters, as editors do) of the byte at `offset`.
    static func position(of offset: Int, in data: Data) -> (line: Int, column: Int) {
        var line = 1
        var column = 1
        for byte in data.prefix(offset) {
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1   // not a UTF-8 continuation byte: a new character
            }
        }
        return (line, column)
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

    /// A top-level value: a plain value, or a vendor's dictionary of plain values (`Braze`).
    private enum PropertyListEntry: Decodable {
        case scalar(PropertyListScalar), dictionary([String: PropertyListScalar])

        init(from decoder: any Decoder) throws {
            let scalar = try PropertyListScalar(from: decoder)
            if case .other = scalar, let members = try? decoder.singleValueContainer().decode([String: PropertyListScalar].self) {
                self = .dictionary(members)
            } else {
                self = .scalar(scalar)
            }
        }

        var value: JWTClaimValue {
            switch self {
            case .scalar(let scalar): scalar.value
            case .dictionary(let members): .object(members.mapValues(\.value))
            }
        }
    }

    /// Checks the shape before any parser sees the bytes, so no nesting can overflow the stack:
    /// an XML property list holds a dictionary with dictionaries at most one level down, no
    /// `<array>`, and no `<key>` twice in one dictionary; a binary one holds at most 64 objects.
    private static func propertyListValues(_ data: Data) throws(ConfigurationError) -> [String: JWTClaimValue] {
        let bytes = [UInt8](data)
        if bytes.starts(with: Array("bplist".utf8)) {
            guard let objects = binaryPropertyListObjectCount(bytes), objects <= 64 else {
                throw .malformedFile(reason: propertyListShape)
            }
        } else {
            guard occurrences(of: "<array", in: bytes) == 0 else { throw .malformedFile(reason: propertyListShape) }
            try checkDictionaries(in: bytes)
        }
        do {
            return try PropertyListDecoder().decode([String: PropertyListEntry].self, from: data).mapValues(\.value)
        } catch {
            throw .malformedFile(reason: propertyListShape)
        }
    }

    /// An XML property list's dictionaries nest at most two deep, and none names a key twice.
    private static func checkDictionaries(in bytes: [UInt8]) throws(ConfigurationError) {
        let text = String(decoding: bytes, as: UTF8.self)
        var open: [Set<String>] = []
        var rest = Substring(text)
        while let start = rest.firstIndex(of: "<") {
            rest = rest[rest.index(after: start)...]
            if rest.hasPrefix("dict") {
                let tag = rest.prefix { $0 != ">" }
                if !tag.hasSuffix("/") {
                    open.append([])
                    guard open.count <= 2 else { throw .malformedFile(reason: propertyListShape) }
                }
            } else if rest.hasPrefix("/dict") {
                guard !open.isEmpty else { throw .malformedFile(reason: propertyListShape) }
                open.removeLast()
            } else if rest.hasPrefix("key>") {
                let body = rest.dropFirst(4)
                guard let end = body.range(of: "</key>") else { throw .malformedFile(reason: propertyListShape) }
                let key = String(body[..<end.lowerBound])
                guard !open.isEmpty else { throw .malformedFile(reason: propertyListShape) }
                guard open[open.count - 1].insert(key).inserted else { throw .duplicateKey(key) }
                rest = body[end.upperBound...]
            }
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

    /// The object count from a binary property list's 32-byte trailer, or nil when there is none.
    private static func binaryPropertyListObjectCount(_ bytes: [UInt8]) -> UInt64? {
        guard bytes.count >= 40 else { return nil }
        let start = bytes.count - 24
        return bytes[start..<(start + 8)].reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// `data` without a leading UTF-8 byte-order mark.
    static func droppingByteOrderMark(_ data: Data) -> Data {
        data.starts(with: [0xEF, 0xBB, 0xBF]) ? Data(data.dropFirst(3)) : data
    }

    private static func sniffFormat(_ data: Data) -> FileFormat {
        let head = droppingByteOrderMark(data.prefix(16)).prefix(8)
        if head.starts(with: Data("bplist".utf8)) || head.starts(with: Data("<?xml".utf8)) { return .propertyList }
        return .json
    }
}
