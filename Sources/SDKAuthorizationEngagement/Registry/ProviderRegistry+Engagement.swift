import Foundation
import SDKAuthorization
import SDKAuthorizationModeKit

extension ProviderFactoryContext {
    /// The Engagement configuration being loaded, when the context comes from an Engagement
    /// configuration (every context `AuthorizedHTTPClient` makes from one does).
    public var configuration: AuthorizationConfiguration? { loadedConfiguration as? AuthorizationConfiguration }
}

extension ProviderRegistry {
    /// Throws what the registry refused (`checkRegistrations()`), then a mode that owns an
    /// Engagement key of every file (``AuthorizationConfiguration/fileKeys``: `advancedAuthEnabled`,
    /// say), which would let the mode take over a plain Exponea configuration. Checked before every
    /// file read and client start with the registry, and before every provider is made.
    func checkEngagementRegistrations() throws(ConfigurationError) {
        try checkRegistrations()
        try checkModes(reserving: AuthorizationConfiguration.fileKeys, as: "an Engagement key of every configuration file")
    }

    /// Resolves the customer-token provider of `configuration`.
    ///
    /// - Throws: `ConfigurationError` with the documented message of the convention in use.
    func resolveProvider(for configuration: AuthorizationConfiguration, context: ProviderFactoryContext) throws(ConfigurationError) -> ResolvedProvider {
        try checkEngagementRegistrations()
        switch configuration.providerLookup {
        case .implicitName(let name):
            switch try resolve(name, context: context) {
            case nil:
                throw ConfigurationError.advancedAuthEnabledWithoutProvider.hinted(forUnresolved: name, in: self, modeSettings: configuration.modeSettings)
            case .provider(let provider)?:
                return ResolvedProvider(provider: provider, isClassBased: false)
            case .type(let found)?:
                guard found is NSObject.Type else { throw .providerIsNotNSObject(name: name) }
                guard let providerType = found as? any AuthorizationProviderType.Type else {
                    throw .providerDoesNotConform(name: name)
                }
                return wrap(providerType, caching: configuration.customerTokenCaching, context: context)
            }
        case .registeredClassName(nil):
            throw .advancedAuthEnabledButProviderNotNamed
        case .registeredClassName(let name?):
            switch try resolve(name, context: context) {
            case nil:
                throw ConfigurationError.registeredClassNotFound(name: name).hinted(forUnresolved: name, in: self, modeSettings: configuration.modeSettings)
            case .provider(let provider)?:
                return ResolvedProvider(provider: provider, isClassBased: false)
            case .type(let found)?:
                guard let providerType = found as? any AuthorizationProviderType.Type else {
                    throw .registeredClassDoesNotImplement(name: name)
                }
                return wrap(providerType, caching: configuration.customerTokenCaching, context: context)
            }
        }
    }

    private func wrap(_ type: any AuthorizationProviderType.Type, caching: CustomerTokenCaching,
                      context: ProviderFactoryContext) -> ResolvedProvider {
        let provider = CustomerTokenProvider(type: type, clock: context.clock, diagnostics: context.diagnostics)
        switch caching {
        case .disabled:
            return ResolvedProvider(provider: provider, isClassBased: true)
        case .honoringExpiry(let leeway, let maximumAge):
            let cached = CachingAuthorizationProvider(wrapping: provider, leeway: leeway, maximumAge: maximumAge, clock: context.clock)
            return ResolvedProvider(provider: cached, isClassBased: true)
        }
    }
}

extension ConfigurationError {
    /// A "not found" error with a hint after its documented message, when there is one: the
    /// registry's (`ProviderRegistry.hint(forUnresolvedName:otherNames:otherModes:modeSettings:)`),
    /// which knows the modes described to it and the built-in ones (``BuiltInProviderName/modes``)
    /// alike: a described mode's product to link and what to register, "did you mean" a registered
    /// or described name, or "register the mode" when the configuration gives mode settings.
    func hinted(forUnresolved name: String, in registry: ProviderRegistry, modeSettings: ModeSettings) -> ConfigurationError {
        let hint = registry.hint(forUnresolvedName: name, otherModes: BuiltInProviderName.modes, modeSettings: modeSettings)
        return hint.map(appendingHint) ?? self
    }
}

/// A provider the registry resolved, and whether it came from a class (re-created on identity change).
struct ResolvedProvider: Sendable {
    let provider: any AuthorizationProvider
    let isClassBased: Bool
}
