import SDKAuthorization

/// The names the built-in modes are found under in every ``ProviderRegistry``, so a configuration
/// (in code or in a file, as `providerName`) chooses its mode by name.
///
/// | name | mode | product to link |
/// | --- | --- | --- |
/// | `SDKAuthorization.IDTokenRefresh` | an `IDTokenStore` authorized for the base URL's host | `SDKAuthorizationIDToken` |
///
/// A mode lives in a product of its own; the registry finds it at run time, as the vendor SDKs find
/// a provider class by name, once that product is linked into the app. Token mode needs no provider
/// (advanced auth disabled); customer-token mode names the app's own ``AuthorizationProviderType``
/// class. An integrator's provider joins the same registry under a name of its own.
public enum BuiltInProviderName {
    /// The async refresh-callback mode: an `IDTokenStore` whose authorized domain is the
    /// configuration's base URL host. Reach it with `client.provider as? IDTokenStore` to set the
    /// token and register the refresh callback.
    public static let idTokenRefresh = "SDKAuthorization.IDTokenRefresh"

    /// The type each built-in name stands for, in the product that holds the mode.
    static let typeNames: [String: String] = [
        idTokenRefresh: "SDKAuthorizationIDToken.IDTokenRefreshMode",
    ]
}
