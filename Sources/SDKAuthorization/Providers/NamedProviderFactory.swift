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
    /// The configuration being loaded, as the registry that loads it knows it.
    package let loadedConfiguration: any Sendable
    /// The built-in modes' settings from the configuration, for the modes' products, which see
    /// the core only.
    package let modeSettings: BuiltInModeSettings
    /// The client's transport, when the registry knows it: a mode that calls the platform itself
    /// (the token exchange) sends through it.
    package let transport: (any HTTPTransport)?

    package init(baseURL: URL, configuration: any Sendable, clock: any AuthorizationClock, diagnostics: any DiagnosticsSink,
                 observer: (any AuthorizationEventObserver)?, modeSettings: BuiltInModeSettings = BuiltInModeSettings(),
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

/// What a configuration says to the built-in modes chosen by name, each under the file key the
/// user wrote (the keys are documented with the configuration).
package struct BuiltInModeSettings: Sendable, Equatable {
    /// The signature mode sends signatures (Braze's `EnableSDKAuthentication`); `true` unless the
    /// configuration turns it off.
    package var signatureAuthenticationEnabled: Bool
    /// The token-exchange mode's exchange endpoint, already checked; `nil` when not configured.
    package var tokenExchangeURL: URL?

    package init(signatureAuthenticationEnabled: Bool = true, tokenExchangeURL: URL? = nil) {
        self.signatureAuthenticationEnabled = signatureAuthenticationEnabled
        self.tokenExchangeURL = tokenExchangeURL
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
