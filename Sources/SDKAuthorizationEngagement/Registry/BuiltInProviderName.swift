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

    /// The product that holds the mode found under `name`, or `nil` when `name` is not a built-in
    /// name: `SDKAuthorizationIDToken` for ``idTokenRefresh``. The name resolves only in an app that
    /// links that product.
    public static func product(for name: String) -> String? {
        typeNames[name].map { String($0.prefix { $0 != "." }) }
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
        if let product = product(for: name) {
            return "\(quoted) is a built-in mode in the product \(product): link \(product) to the app's target"
        }
        guard let meant = nearestName(to: name) else { return nil }
        return "\(quoted) is not registered; did you mean \"\(meant)\"?"
    }

    /// The built-in name `name` is closest to, if it is close: the same but for case, its last part
    /// alone, or at most two letters inserted, removed or changed. Bounded: names longer than 64
    /// characters are compared by case only.
    static func nearestName(to name: String) -> String? {
        let lowered = name.lowercased()
        var best: (name: String, distance: Int)?
        for builtIn in typeNames.keys.sorted() {
            let builtInLowered = builtIn.lowercased()
            let lastPart = builtInLowered.split(separator: ".").last.map(String.init) ?? builtInLowered
            if lowered == builtInLowered || lowered == lastPart { return builtIn }
            guard let distance = editDistance(Array(lowered.unicodeScalars), Array(builtInLowered.unicodeScalars), limit: 2) else { continue }
            if best == nil || distance < best!.distance { best = (builtIn, distance) }
        }
        return best?.name
    }

    /// The Levenshtein distance between `a` and `b` when it is at most `limit`; `nil` when it is
    /// more, or when either is longer than 64.
    static func editDistance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar], limit: Int) -> Int? {
        guard a.count <= 64, b.count <= 64, abs(a.count - b.count) <= limit else { return nil }
        var previous = Array(0...b.count)
        for i in 1...max(a.count, 1) where !a.isEmpty {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...max(b.count, 1) where !b.isEmpty {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count] <= limit ? previous[b.count] : nil
    }

    /// The type each built-in name stands for, in the product that holds the mode.
    static let typeNames: [String: String] = [
        idTokenRefresh: "SDKAuthorizationIDToken.IDTokenRefreshMode",
        signature: "SDKAuthorizationSignature.SignatureMode",
        tokenExchange: "SDKAuthorizationTokenExchange.TokenExchangeMode",
    ]
}
