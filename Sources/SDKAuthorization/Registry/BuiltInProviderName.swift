/// The names the built-in modes are registered under in every ``ProviderRegistry``, so a
/// configuration (in code or in a file, as `providerName`) chooses its mode by name.
///
/// | name | mode |
/// | --- | --- |
/// | `SDKAuthorization.IDTokenRefresh` | ``IDTokenStore``, authorized for the base URL's host |
///
/// Token mode needs no provider (advanced auth disabled); customer-token mode names the app's own
/// ``AuthorizationProviderType`` class. An integrator's provider joins the same registry under a
/// name of its own.
public enum BuiltInProviderName {
    /// The async refresh-callback mode: an ``IDTokenStore`` whose authorized domain is the
    /// configuration's base URL host. Reach it with `client.provider as? IDTokenStore` to set the
    /// token and register the refresh callback.
    public static let idTokenRefresh = "SDKAuthorization.IDTokenRefresh"

    static func registerAll(in registry: ProviderRegistry) {
        registry.register(name: idTokenRefresh) { context in
            try IDTokenStore(
                authorizedDomains: [context.configuration.baseURL.host ?? ""],
                clock: context.clock,
                diagnostics: context.diagnostics,
                observer: context.observer
            )
        }
    }
}
