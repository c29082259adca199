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

    package init(baseURL: URL, configuration: any Sendable, clock: any AuthorizationClock, diagnostics: any DiagnosticsSink,
                 observer: (any AuthorizationEventObserver)?) {
        self.baseURL = baseURL
        self.loadedConfiguration = configuration
        self.clock = clock
        self.diagnostics = diagnostics
        self.observer = observer
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
