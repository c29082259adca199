import SDKAuthorization

/// The names the built-in modes are found under in every ``ProviderRegistry``, so a configuration
/// (in code or in a file, as `providerName`) chooses its mode by name.
///
/// | name | mode | product to link | file keys of the mode |
/// | --- | --- | --- | --- |
/// | `SDKAuthorization.IDTokenRefresh` | an `IDTokenStore` authorized for the base URL's origin | `SDKAuthorizationIDToken` | none |
/// | `SDKAuthorization.Signature` | a `SignatureAuthentication` with the default header | `SDKAuthorizationSignature` | `signatureAuthenticationEnabled` (or Braze's `EnableSDKAuthentication`) |
/// | `SDKAuthorization.TokenExchange` | a `TokenExchangeProvider` for the exchange URL | `SDKAuthorizationTokenExchange` | `tokenExchangeURL` (required) |
///
/// A mode lives in a product of its own; the registry finds it at run time, as the vendor SDKs find
/// a provider class by name, once that product is linked into the app. Token mode needs no provider
/// (advanced auth disabled); customer-token mode names the app's own ``AuthorizationProviderType``
/// class. An integrator's provider joins the same registry under a name of its own.
///
/// A mode found by name is reached through `client.provider` to give it what a file cannot hold:
/// the ID token and the refresh callback, the user and their signature, the payload signer.
public enum BuiltInProviderName {
    /// The async refresh-callback mode: an `IDTokenStore` whose authorized domain is the
    /// configuration's base URL origin. Reach it with `client.provider as? IDTokenStore` to set the
    /// token and register the refresh callback.
    public static let idTokenRefresh = "SDKAuthorization.IDTokenRefresh"

    /// The signature mode (Braze-style SDK authentication): a `SignatureAuthentication` sending the
    /// user's signature in `X-Braze-Auth-Signature` to the endpoints that take a customer token.
    /// Reach it with `client.provider as? SignatureAuthentication` to call `changeUser(_:signature:)`
    /// and subscribe to failures. ``AuthorizationConfiguration/signatureAuthenticationEnabled``
    /// (file key `signatureAuthenticationEnabled`, or Braze's `EnableSDKAuthentication`) set to
    /// `false` keeps the mode loaded but sends no signature, as Braze does with SDK authentication off.
    public static let signature = "SDKAuthorization.Signature"

    /// The payload-signing and token-exchange mode: a `TokenExchangeProvider` exchanging signed
    /// payloads at ``AuthorizationConfiguration/tokenExchangeURL`` (file key `tokenExchangeURL`,
    /// required) through the client's transport, keeping the auth token in memory. Reach it with
    /// `client.provider as? TokenExchangeProvider` and give it the app's signer with `setSigner(_:)`;
    /// until then a request that needs a token fails with `RequestError.Code.signingFailed`.
    public static let tokenExchange = "SDKAuthorization.TokenExchange"

    /// The type each built-in name stands for, in the product that holds the mode.
    static let typeNames: [String: String] = [
        idTokenRefresh: "SDKAuthorizationIDToken.IDTokenRefreshMode",
        signature: "SDKAuthorizationSignature.SignatureMode",
        tokenExchange: "SDKAuthorizationTokenExchange.TokenExchangeMode",
    ]
}
