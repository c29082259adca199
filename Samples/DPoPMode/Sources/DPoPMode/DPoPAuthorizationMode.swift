import Foundation
import SDKAuthorization
import SDKAuthorizationModeKit

/// The DPoP mode (`DPoPMode.DPoP`, RFC 9449): a configuration that chooses it by name gets a
/// ``DPoPProvider`` fetching tokens at its `dpopTokenURL` through the client's transport. Register it
/// with the app's key, `registry.register(DPoPAuthorizationMode(signer: signer))`, or by type alone
/// from `sdkauth-providers.json` (mode `factory`), which uses ``init()``.
public struct DPoPAuthorizationMode: StandaloneProviderFactory {
    /// `DPoPMode.DPoP`.
    public static let providerName = "DPoPMode.DPoP"

    static let tokenURLKey = ModeSettingKey.secureEndpoint("dpopTokenURL", purpose: "Where DPoP-bound access tokens are fetched (client credentials grant)")
    static let clientIDKey = ModeSettingKey(
        "dpopClientID", type: .string, required: true, meaning: "The client ID sent with each token request: 1 to 256 visible ASCII characters.",
        validate: { value in
            guard case .string(let id) = value else { return nil }
            let bytes = id.utf8
            return (1...256).contains(bytes.count) && bytes.allSatisfy({ (0x21...0x7E).contains($0) }) ? nil
                : "must be 1 to 256 visible ASCII characters (no spaces or control characters)"
        })
    static let nonceRetryKey = ModeSettingKey(
        "dpopNonceRetry", type: .bool, default: .bool(true),
        meaning: "Whether a request the server answers with `use_dpop_nonce` is sent once more with the server's nonce.")

    /// `dpopTokenURL` (required), `dpopClientID` (required), `dpopNonceRetry` (default `true`).
    public static let settingKeys = [tokenURLKey, clientIDKey, nonceRetryKey]

    private let signer: any DPoPSigner

    /// The mode whose providers sign with a fresh P-256 key, one per mode (the build-time
    /// registration's choice).
    public init() {
        self.init(signer: P256DPoPSigner())
    }

    /// The mode whose providers sign with the app's key.
    public init(signer: any DPoPSigner) {
        self.signer = signer
    }

    /// A ``DPoPProvider`` for the configuration's keys, on the client's transport, clock and diagnostics.
    ///
    /// - Throws: `ConfigurationError` for a missing or bad key (checked again: a registry of another
    ///   kind may not check), or ``ConfigurationError/dpopTransportMissing``.
    public func makeProvider(for context: ProviderFactoryContext) throws -> any AuthorizationProvider {
        let settings = try context.modeSettings.checked(for: Self.settingKeys, providerName: Self.providerName)
        guard let tokenURL = settings.url(Self.tokenURLKey.name) else { throw ConfigurationError.missingKey(Self.tokenURLKey.name) }
        guard let clientID = settings.string(Self.clientIDKey.name) else { throw ConfigurationError.missingKey(Self.clientIDKey.name) }
        guard let transport = context.transport else { throw ConfigurationError.dpopTransportMissing }
        return try DPoPProvider(tokenURL: tokenURL, clientID: clientID, signer: signer, transport: transport, clock: context.clock,
                                diagnostics: context.diagnostics, nonceRetry: settings.bool(Self.nonceRetryKey.name) ?? true)
    }
}
