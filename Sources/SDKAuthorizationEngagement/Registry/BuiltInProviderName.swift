import SDKAuthorization
import SDKAuthorizationModeKit

/// The names of the built-in modes, which a configuration (in code or in a file, as
/// `providerName`) chooses once the app registers the mode with its ``ProviderRegistry``, and
/// their descriptions (``modes``).
///
/// | name | mode to register | product to link | file keys of the mode |
/// | --- | --- | --- | --- |
/// | `SDKAuthorization.IDTokenRefresh` | `IDTokenRefreshMode(refresh:)` | `SDKAuthorizationIDToken` | none |
/// | `SDKAuthorization.Signature` | `SignatureMode()` | `SDKAuthorizationSignature` | `signatureAuthenticationEnabled` (or Braze's `EnableSDKAuthentication`, which in a `Braze` dictionary also chooses the mode) |
/// | `SDKAuthorization.TokenExchange` | `TokenExchangeMode(signer:)` | `SDKAuthorizationTokenExchange` | `tokenExchangeURL` (required) |
///
/// A mode lives in a product of its own and is registered as any mode is, with what it needs from
/// the app (the refresh callback, the payload signer), so the provider it makes is complete when
/// the client starts. The Engagement configuration reads every file and starts every client with
/// these descriptions besides the registry's own (`ProviderRegistry.describe(_:)`), so a
/// configuration that names a built-in mode the registry does not hold hears what to link and
/// register, as it would for any mode the app describes. Token mode needs no provider (advanced
/// auth disabled); customer-token mode names the app's own ``AuthorizationProviderType`` class.
public enum BuiltInProviderName {
    /// The async refresh-callback mode, `IDTokenRefreshMode` in `SDKAuthorizationIDToken`.
    public static let idTokenRefresh = "SDKAuthorization.IDTokenRefresh"

    /// The signature mode (Braze-style SDK authentication), `SignatureMode` in `SDKAuthorizationSignature`.
    public static let signature = "SDKAuthorization.Signature"

    /// The payload-signing and token-exchange mode, `TokenExchangeMode` in `SDKAuthorizationTokenExchange`.
    public static let tokenExchange = "SDKAuthorization.TokenExchange"

    /// The built-in modes described: name, keys, product and registration, as each mode describes
    /// itself (`SignatureMode.modeDescription`), for an app that does not link the mode's product.
    /// The keys' checks are the modes' own: these say only what a file may spell and which mode
    /// owns it.
    public static let modes: [ModeDescription] = [
        ModeDescription(providerName: idTokenRefresh, product: "SDKAuthorizationIDToken", registration: "IDTokenRefreshMode(refresh:)"),
        ModeDescription(
            providerName: signature,
            settingKeys: [
                ModeSettingKey("signatureAuthenticationEnabled", type: .bool, default: .bool(true),
                               meaning: "The signature mode's switch: `false` keeps the mode but sends no signature.",
                               vendorSpellings: [.init(["EnableSDKAuthentication"], vendor: "Braze"),
                                                 .init(["Braze", "EnableSDKAuthentication"], vendor: "Braze", choosesMode: true)]),
            ],
            product: "SDKAuthorizationSignature", registration: "SignatureMode()"),
        ModeDescription(
            providerName: tokenExchange,
            settingKeys: [
                ModeSettingKey("tokenExchangeURL", type: .url, required: true,
                               meaning: "Where signed payloads are exchanged: `https` (`http` on a loopback host only), no user info, query or fragment."),
            ],
            product: "SDKAuthorizationTokenExchange", registration: "TokenExchangeMode(signer:)"),
    ]
}
