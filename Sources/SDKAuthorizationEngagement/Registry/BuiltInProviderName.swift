import SDKAuthorization
import SDKAuthorizationModeKit

/// The names of the built-in modes, which a configuration (in code or in a file, as
/// `providerName`) chooses once the app registers the mode with its ``ProviderRegistry``.
///
/// | name | mode to register | product to link | file keys of the mode |
/// | --- | --- | --- | --- |
/// | `SDKAuthorization.IDTokenRefresh` | `IDTokenRefreshMode(refresh:)` | `SDKAuthorizationIDToken` | none |
/// | `SDKAuthorization.Signature` | `SignatureMode()` | `SDKAuthorizationSignature` | `signatureAuthenticationEnabled` (or Braze's `EnableSDKAuthentication`, which in a `Braze` dictionary also chooses the mode) |
/// | `SDKAuthorization.TokenExchange` | `TokenExchangeMode(signer:)` | `SDKAuthorizationTokenExchange` | `tokenExchangeURL` (required) |
///
/// A mode lives in a product of its own and is registered as any mode is, with what it needs from
/// the app (the refresh callback, the payload signer), so the provider it makes is complete when
/// the client starts. These names are known here only to say what to link and register when a
/// configuration names one the registry does not hold. Token mode needs no provider (advanced auth
/// disabled); customer-token mode names the app's own ``AuthorizationProviderType`` class.
public enum BuiltInProviderName {
    /// The async refresh-callback mode, `IDTokenRefreshMode` in `SDKAuthorizationIDToken`.
    public static let idTokenRefresh = "SDKAuthorization.IDTokenRefresh"

    /// The signature mode (Braze-style SDK authentication), `SignatureMode` in `SDKAuthorizationSignature`.
    public static let signature = "SDKAuthorization.Signature"

    /// The payload-signing and token-exchange mode, `TokenExchangeMode` in `SDKAuthorizationTokenExchange`.
    public static let tokenExchange = "SDKAuthorization.TokenExchange"

    /// The product that holds the mode named `name`, or `nil` when `name` is not a built-in
    /// name: `SDKAuthorizationIDToken` for ``idTokenRefresh``. The name resolves only in an app that
    /// links that product and registers the mode.
    public static func product(for name: String) -> String? {
        modes[name]?.product
    }

    /// How the mode named `name` is registered (`SignatureMode()`), or `nil` when `name` is not a
    /// built-in name.
    public static func registration(for name: String) -> String? {
        modes[name]?.registration
    }

    /// The built-in mode that owns the configuration key `key` (as a file spells it, or the first
    /// part of a nested key: `Braze`), or `nil`: how a file reader says which mode to register
    /// for a key no registered mode owns.
    public static func owner(ofKey key: String) -> String? {
        switch key {
        case "signatureAuthenticationEnabled", "EnableSDKAuthentication", "Braze": signature
        case "tokenExchangeURL": tokenExchange
        default: nil
        }
    }

    /// What to do when no provider is found under `name`: for a built-in name, link its product;
    /// for a name close to one (another case, a letter or two off, or without the
    /// `SDKAuthorization.` prefix), the built-in name it may mean; otherwise `nil`. The registry
    /// adds it to its "not found" errors with `ConfigurationError.appendingHint(_:)`, and the
    /// authorization doctor reports the same.
    ///
    /// ```
    /// Advanced authorization flag has been enabled without provider ("SDKAuthorization.IDTokenRefrsh" is not registered; did you mean "SDKAuthorization.IDTokenRefresh"?)
    /// ```
    public static func hint(forUnresolvedName name: String) -> String? {
        let quoted = LogText.doubleQuoted(name, limit: 80)
        if let product = product(for: name), let registration = registration(for: name) {
            return "\(quoted) is a built-in mode in the product \(product): link \(product) to the app's target and register \(registration) with the registry"
        }
        guard let meant = nearestName(to: name) else { return nil }
        return "\(quoted) is not registered; did you mean \"\(meant)\"?"
    }

    /// The built-in name `name` is closest to, if it is close: the same but for case, its last part
    /// alone, or at most two letters inserted, removed or changed. Bounded: names longer than 64
    /// characters are compared by case only.
    static func nearestName(to name: String) -> String? {
        let lowered = name.lowercased()
        for builtIn in modes.keys.sorted() {
            let builtInLowered = builtIn.lowercased()
            let lastPart = builtInLowered.split(separator: ".").last.map(String.init) ?? builtInLowered
            if lowered == builtInLowered || lowered == lastPart { return builtIn }
        }
        var nearest = NearestName(candidates: modes.keys)
        return nearest.nearest(to: name)
    }

    /// Each built-in mode's product and registration.
    static let modes: [String: (product: String, registration: String)] = [
        idTokenRefresh: ("SDKAuthorizationIDToken", "IDTokenRefreshMode(refresh:)"),
        signature: ("SDKAuthorizationSignature", "SignatureMode()"),
        tokenExchange: ("SDKAuthorizationTokenExchange", "TokenExchangeMode(signer:)"),
    ]
}
