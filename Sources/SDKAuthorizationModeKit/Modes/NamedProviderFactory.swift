import Foundation
import SDKAuthorization

/// What a ``NamedProviderFactory`` is told when a registry makes its provider: the configuration's
/// base URL and the client's clock, diagnostics and observer.
///
/// A registry that loads a configuration of its own kind makes the context; the Engagement mode's
/// registry also shows its configuration (`context.configuration` in `SDKAuthorizationEngagement`).
public struct ProviderFactoryContext: Sendable {
    /// The base URL of the configuration being loaded: the host a mode authorizes.
    public let baseURL: URL
    /// The clock the client uses.
    public let clock: any AuthorizationClock
    /// The client's diagnostics sink.
    public let diagnostics: any DiagnosticsSink
    /// The client's event observer, if any: give it to a provider that reports `AuthorizationEvent`s.
    public let observer: (any AuthorizationEventObserver)?
    /// The configuration being loaded, as the registry that loads it knows it (the Engagement
    /// mode's registry gives its `AuthorizationConfiguration`): a factory that knows the
    /// registry's type casts it.
    public let loadedConfiguration: any Sendable
    /// The settings the configuration carried for the mode, under the keys the mode declares
    /// (``NamedProviderFactory/settingKeys``: `tokenExchangeURL`, say), checked and with defaults
    /// filled in: how a mode reads its own settings without knowing the configuration's type.
    public let modeSettings: ModeSettings
    /// The client's transport, when the registry knows it: a mode that calls a server itself
    /// (the token exchange) sends through it, so the app's transport and its tests see the call.
    public let transport: (any HTTPTransport)?

    /// Creates a context, as a registry does before it asks a factory for its provider (and as a
    /// factory's tests do).
    ///
    /// - Parameters:
    ///   - baseURL: The base URL of the configuration being loaded.
    ///   - configuration: The configuration being loaded, kept as ``loadedConfiguration``.
    ///   - clock: The clock the client uses.
    ///   - diagnostics: The client's diagnostics sink.
    ///   - observer: The client's event observer, if any.
    ///   - modeSettings: The settings the configuration carried for the modes.
    ///   - transport: The client's transport, when known.
    public init(baseURL: URL, configuration: any Sendable, clock: any AuthorizationClock, diagnostics: any DiagnosticsSink,
                observer: (any AuthorizationEventObserver)?, modeSettings: ModeSettings = ModeSettings(),
                transport: (any HTTPTransport)? = nil) {
        self.baseURL = baseURL
        self.loadedConfiguration = configuration
        self.clock = clock
        self.diagnostics = diagnostics
        self.observer = observer
        self.modeSettings = modeSettings
        self.transport = transport
    }
}

/// What a configuration says to the mode it chooses by name: values under the keys the mode
/// declares (``ModeSettingKey``; `tokenExchangeURL`, `signatureAuthenticationEnabled` for the
/// built-in modes).
///
/// The registry that loads a configuration checks it against the mode's keys
/// (``checked(for:providerName:)``); a ``NamedProviderFactory`` reads its keys from
/// ``ProviderFactoryContext/modeSettings``:
///
/// ```swift
/// guard let url = context.modeSettings.url("partnerTokenURL") else {
///     throw ConfigurationError.missingKey("partnerTokenURL")
/// }
/// ```
///
/// A mode still checks what it relies on: a registry of another kind may not check.
public struct ModeSettings: Sendable, Equatable {
    /// One setting's value.
    public enum Value: Sendable, Equatable {
        /// A switch.
        case bool(Bool)
        /// Text.
        case string(String)
        /// A URL.
        case url(URL)
        /// A number, of a ``ModeSettingKey/ValueType/number`` key.
        case number(Double)
        /// A whole number, of a ``ModeSettingKey/ValueType/integer`` key.
        case integer(Int)
    }

    /// Every setting, by key.
    public let values: [String: Value]

    /// Settings made of `values`; none by default.
    public init(_ values: [String: Value] = [:]) {
        self.values = values
    }

    /// The value under `key`, or `nil` when the configuration carried none.
    public subscript(key: String) -> Value? { values[key] }

    /// The switch under `key`, or `nil` when there is none or it is not a switch.
    public func bool(_ key: String) -> Bool? {
        guard case .bool(let value)? = values[key] else { return nil }
        return value
    }

    /// The text under `key`, or `nil` when there is none or it is not text.
    public func string(_ key: String) -> String? {
        guard case .string(let value)? = values[key] else { return nil }
        return value
    }

    /// The URL under `key`, or `nil` when there is none or it is not a URL.
    public func url(_ key: String) -> URL? {
        guard case .url(let value)? = values[key] else { return nil }
        return value
    }

    /// The number under `key` (a ``ModeSettingKey/ValueType/number`` key's value), or `nil` when
    /// there is none or it is not a number.
    public func number(_ key: String) -> Double? {
        guard case .number(let value)? = values[key] else { return nil }
        return value
    }

    /// The whole number under `key` (a ``ModeSettingKey/ValueType/integer`` key's value), or `nil`
    /// when there is none or it is not one.
    public func integer(_ key: String) -> Int? {
        guard case .integer(let value)? = values[key] else { return nil }
        return value
    }
}

/// One configuration key a mode owns: its name, the type of its value, its default, how it is
/// checked, and the spellings of the same key in the vendor SDKs' own files.
///
/// A mode declares its keys in ``NamedProviderFactory/settingKeys``; a registry that reads a
/// configuration file accepts exactly the keys of the modes registered with it, and checks each
/// value here before the mode sees it in ``ProviderFactoryContext/modeSettings``.
///
/// ```swift
/// extension PartnerTokenMode {
///     static let partnerID = ModeSettingKey(
///         "partnerID", type: .string, required: true,
///         meaning: "The partner's ID: 1 to 64 letters and digits.",
///         validate: { value in
///             guard case .string(let id) = value else { return nil }
///             let good = (1...64).contains(id.count) && id.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
///             return good ? nil : "must be 1 to 64 letters and digits"
///         })
///     static let partnerTokenURL = ModeSettingKey.secureEndpoint("partnerTokenURL", purpose: "Where the partner token is fetched")
/// }
/// ```
public struct ModeSettingKey: Sendable {
    /// The type of a key's value.
    public enum ValueType: Sendable, Equatable {
        /// A switch: a JSON or property-list boolean.
        case bool
        /// Text.
        case string
        /// A URL, written in a file as text.
        case url
        /// A number (`600`, `0.5`); a key may give it a range (``ModeSettingKey/range``).
        case number
        /// A whole number (`600`, not `600.5`); a key may give it a range (``ModeSettingKey/range``).
        case integer

        /// How the type is named in errors: "a boolean", "a string", "a URL string", "a number",
        /// "an integer".
        public var expected: String {
            switch self {
            case .bool: "a boolean"
            case .string: "a string"
            case .url: "a URL string"
            case .number: "a number"
            case .integer: "an integer"
            }
        }
    }

    /// The same key as a vendor SDK spells it in its own file.
    public struct VendorSpelling: Sendable, Equatable {
        /// Where the key is in the file: one name for a top-level key (`["EnableSDKAuthentication"]`),
        /// or a dictionary's name and the key inside it (`["Braze", "EnableSDKAuthentication"]`).
        public let path: [String]
        /// The vendor that spells it so (`Braze`).
        public let vendor: String
        /// Whether the key is the vendor's switch for the mode itself: `true` in a file chooses the
        /// mode (advanced auth on, the mode's provider name) and sets the key; `false` or absent
        /// leaves the mode off unless the file chooses it otherwise.
        public let choosesMode: Bool

        /// A vendor spelling at `path`.
        public init(_ path: [String], vendor: String, choosesMode: Bool = false) {
            self.path = path
            self.vendor = vendor
            self.choosesMode = choosesMode
        }

        /// The path as a file's errors name it: `Braze.EnableSDKAuthentication`.
        public var dottedPath: String { path.joined(separator: ".") }
    }

    /// The key as the framework's own files and ``ModeSettings`` spell it.
    public let name: String
    /// The type of its value.
    public let type: ValueType
    /// The value the mode gets when the configuration gives none; `nil` for none.
    public let defaultValue: ModeSettings.Value?
    /// Whether a configuration that chooses the mode must give the key.
    public let isRequired: Bool
    /// The values a ``ValueType/number`` or ``ValueType/integer`` key accepts, bounds included;
    /// `nil` for any.
    public let range: ClosedRange<Double>?
    /// What the key does, for the documentation's table of keys.
    public let meaning: String
    /// The vendors' spellings of the same key.
    public let vendorSpellings: [VendorSpelling]
    private let validation: @Sendable (ModeSettings.Value) -> String?

    /// A key named `name` whose value is of `type`.
    ///
    /// - Parameters:
    ///   - name: The key.
    ///   - type: The type of its value.
    ///   - defaultValue: The value when none is given; `nil` for none.
    ///   - required: Whether a configuration choosing the mode must give it.
    ///   - range: For a ``ValueType/number`` or ``ValueType/integer`` key, the values it accepts
    ///     (`60...3600`), bounds included; `nil` (the default) for any. A registry refuses a range
    ///     on a key of another type, and a default outside the range.
    ///   - meaning: What it does (one sentence, for the table of keys).
    ///   - vendorSpellings: The vendors' spellings of the same key.
    ///   - validate: Checks a value of the right type: `nil` when it is good, else the reason it is
    ///     not (without the value when it may be secret); the error names the key as the file wrote it.
    public init(_ name: String, type: ValueType, default defaultValue: ModeSettings.Value? = nil, required: Bool = false,
                range: ClosedRange<Double>? = nil, meaning: String, vendorSpellings: [VendorSpelling] = [],
                validate: @escaping @Sendable (ModeSettings.Value) -> String? = { _ in nil }) {
        self.name = name
        self.type = type
        self.defaultValue = defaultValue
        self.isRequired = required
        self.range = range
        self.meaning = meaning
        self.vendorSpellings = vendorSpellings
        self.validation = validate
    }

    /// Checks `value`, given under `spelledKey` (the key as the configuration wrote it): its type,
    /// its ``range``, then the key's validation.
    ///
    /// - Throws: `ConfigurationError.wrongType(key:expected:)` (the type with the range: "an integer
    ///   from 60 to 3600") or `.invalidValue(key:reason:)` naming `spelledKey`.
    public func check(_ value: ModeSettings.Value, spelledKey: String? = nil) throws(ConfigurationError) {
        let key = spelledKey ?? name
        try checkTypeAndRange(value, key: key)
        if let reason = validation(value) { throw .invalidValue(key: key, reason: reason) }
    }

    /// The type and range part of ``check(_:spelledKey:)``.
    private func checkTypeAndRange(_ value: ModeSettings.Value, key: String) throws(ConfigurationError) {
        let number: Double?
        switch (type, value) {
        case (.bool, .bool), (.string, .string), (.url, .url): number = nil
        case (.number, .number(let found)): number = found
        case (.integer, .integer(let found)): number = Double(found)
        default: throw .wrongType(key: key, expected: expected)
        }
        if let number {
            guard number.isFinite else { throw .invalidValue(key: key, reason: "it is not a finite number; expected \(expected)") }
            if let range, !range.contains(number) {
                throw .invalidValue(key: key, reason: "\(Self.text(number)) is outside the range; expected \(expected)")
            }
        }
    }

    /// The key's type as errors name it, with its range: "an integer from 60 to 3600".
    public var expected: String {
        guard let range, type == .number || type == .integer else { return type.expected }
        return "\(type.expected) from \(Self.text(range.lowerBound)) to \(Self.text(range.upperBound))"
    }

    /// A number as messages and descriptions write it: `600`, not `600.0`; `0.5`.
    static func text(_ number: Double) -> String {
        if number.isFinite, number == number.rounded(), abs(number) < 1e15 { return String(Int(number)) }
        return "\(number)"
    }
}

extension ModeSettings {
    /// These settings checked against the keys of the mode `providerName`: every key is one of
    /// `keys` with a value of its type that its validation accepts, every required key is given,
    /// and every default is filled in.
    ///
    /// - Throws: `ConfigurationError` naming the first bad key.
    public func checked(for keys: [ModeSettingKey], providerName: String) throws(ConfigurationError) -> ModeSettings {
        let owned = Dictionary(keys.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for key in values.keys.sorted() where owned[key] == nil {
            throw ConfigurationError.unknownKeys([key]).appendingHint(
                "\(LogText.escaped(key, limit: 64)) is not a setting of the mode \(LogText.typeName(providerName))")
        }
        var result = values
        for key in keys {
            if let value = values[key.name] {
                try key.check(value)
            } else if let value = key.defaultValue {
                result[key.name] = value
            } else if key.isRequired {
                throw .missingKey(key.name)
            }
        }
        return ModeSettings(result)
    }
}

extension ModeSettingKey {
    /// A URL key for an endpoint a mode sends secrets to or fetches them from, checked by
    /// `ConfigurationError.problem(withSecureEndpoint:)`: `https`, or `http` on a loopback host
    /// only; no user info, query or fragment. Its ``meaning`` is `purpose` followed by that rule.
    public static func secureEndpoint(_ name: String, required: Bool = true, purpose: String) -> ModeSettingKey {
        ModeSettingKey(name, type: .url, required: required,
                       meaning: "\(purpose): `https` (`http` on a loopback host only), no user info, query or fragment.",
                       validate: { value in
                           guard case .url(let url) = value else { return nil }
                           return ConfigurationError.problem(withSecureEndpoint: url)
                       })
    }
}

/// A mode a registry finds by name: it declares its name and the configuration keys it owns, and
/// makes the provider for a configuration that chooses it. The app registers an instance, which
/// carries what a configuration file cannot (a signer, a refresh callback, a store), so the
/// provider it makes is finished when the client starts.
///
/// ```swift
/// public struct PartnerTokenMode: NamedProviderFactory {
///     public static let providerName = "PartnerSDK.PartnerToken"
///     public func makeProvider(for context: ProviderFactoryContext) throws -> any AuthorizationProvider {
///         PartnerTokenProvider(baseURL: context.baseURL)
///     }
/// }
/// // registry.register(PartnerTokenMode())
/// ```
public protocol NamedProviderFactory: Sendable {
    /// The name a configuration chooses the mode by (`providerName` in a file).
    static var providerName: String { get }
    /// The configuration keys the mode owns; none by default.
    static var settingKeys: [ModeSettingKey] { get }
    /// The mode described: ``providerName``, ``settingKeys``, the product that provides it and how
    /// it is registered. By default the product is the module that declares the type and the
    /// registration is not said; a mode whose registration needs arguments says it, so a
    /// registry's hints name it:
    ///
    /// ```swift
    /// public static var modeDescription: ModeDescription {
    ///     ModeDescription(providerName: providerName, settingKeys: settingKeys, product: "PartnerMode",
    ///                     registration: "PartnerTokenMode(session:)")
    /// }
    /// ```
    static var modeDescription: ModeDescription { get }
    /// The provider for the configuration being loaded; ``ProviderFactoryContext/modeSettings``
    /// holds the mode's keys, checked against ``settingKeys``, defaults filled in.
    func makeProvider(for context: ProviderFactoryContext) throws -> any AuthorizationProvider
}

extension NamedProviderFactory {
    /// No keys.
    public static var settingKeys: [ModeSettingKey] { [] }

    /// The mode's name and keys, its product the module that declares it, its registration not said.
    public static var modeDescription: ModeDescription {
        let module = String(reflecting: Self.self).prefix { $0 != "." }
        return ModeDescription(providerName: providerName, settingKeys: settingKeys, product: String(module))
    }
}

/// A mode that needs nothing from the app, so it can be registered by its type alone: how the
/// build-time registration (`sdkauth-providers.json`, mode `factory`) registers a mode, as
/// `register(Mode(), under: name)` under the manifest's name.
///
/// ```swift
/// public struct PartnerTokenMode: StandaloneProviderFactory {
///     public static let providerName = "PartnerSDK.PartnerToken"
///     public init() {}
///     public func makeProvider(for context: ProviderFactoryContext) throws -> any AuthorizationProvider {
///         PartnerTokenProvider(baseURL: context.baseURL)
///     }
/// }
/// ```
public protocol StandaloneProviderFactory: NamedProviderFactory {
    /// The mode, complete.
    init()
}
