import Foundation

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
    /// The client's event observer, if any: give it to a provider that reports ``AuthorizationEvent``s.
    public let observer: (any AuthorizationEventObserver)?
    /// The configuration being loaded, as the registry that loads it knows it (the Engagement
    /// mode's registry gives its `AuthorizationConfiguration`): a factory that knows the
    /// registry's type casts it.
    public let loadedConfiguration: any Sendable
    /// The settings the configuration carried for the modes, each under the key the configuration
    /// uses (`tokenExchangeURL`, say): how a mode reads its own settings without knowing the
    /// configuration's type.
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

/// What a configuration says to the modes it may choose by name: values under keys, each key the
/// configuration's own name for the setting (`tokenExchangeURL`, `signatureAuthenticationEnabled`
/// in the Engagement configuration).
///
/// The registry that loads a configuration fills it; a ``NamedProviderFactory`` reads the keys of
/// its own mode from ``ProviderFactoryContext/modeSettings``:
///
/// ```swift
/// guard let url = context.modeSettings.url("partnerTokenURL") else {
///     throw ConfigurationError.missingKey("partnerTokenURL")
/// }
/// ```
///
/// Values are checked by whoever reads the configuration; a mode still checks what it relies on.
public struct ModeSettings: Sendable, Equatable {
    /// One setting's value.
    public enum Value: Sendable, Equatable {
        /// A switch.
        case bool(Bool)
        /// Text.
        case string(String)
        /// A URL.
        case url(URL)
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
}

/// A type whose module-qualified name a registry resolves to a native provider: how a mode in a
/// product of its own (or an integrator's provider) is found by name without being registered in
/// code. Each built-in mode that can be chosen by name has one, in its own product.
///
/// ```swift
/// public enum PartnerTokenMode: NamedProviderFactory {
///     public static func makeProvider(for context: ProviderFactoryContext) throws -> any AuthorizationProvider {
///         PartnerTokenProvider(baseURL: context.baseURL)
///     }
/// }
/// // providerName: "PartnerSDK.PartnerTokenMode"
/// ```
public protocol NamedProviderFactory: SendableMetatype {
    /// The provider for the configuration being loaded.
    static func makeProvider(for context: ProviderFactoryContext) throws -> any AuthorizationProvider
}
