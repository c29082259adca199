import Foundation
import SDKAuthorization
import SDKAuthorizationModeKit

/// The DPoP mode (`DPoPMode.DPoP`, RFC 9449): a configuration that chooses it by name gets a
/// ``DPoPProvider`` that fetches key-bound tokens at its `dpopTokenURL` through the client's
/// transport and proves possession of the app's key on every request.
///
/// Register it with the registry that reads the configuration, with the app's key:
///
/// ```swift
/// let registry = ProviderRegistry()
/// registry.register(DPoPAuthorizationMode(signer: P256DPoPSigner(privateKey: storedKey)))
/// let configuration = try AuthorizationConfiguration(contentsOf: fileURL, registry: registry)
/// let client = try AuthorizedHTTPClient(configuration: configuration, policy: policy, registry: registry)
/// ```
///
/// or by type alone from `sdkauth-providers.json` (mode `factory`), which uses ``init()``: a fresh
/// key per launch.
///
/// Its keys: `dpopTokenURL` (required), `dpopClientID` (required), `dpopNonceRetry` (default `true`).
public struct DPoPAuthorizationMode: StandaloneProviderFactory {
    /// `DPoPMode.DPoP`.
    public static let providerName = "DPoPMode.DPoP"

    /// `dpopTokenURL`: the token endpoint's key.
    static let tokenURLKey = "dpopTokenURL"
    /// `dpopClientID`: the client ID's key.
    static let clientIDKey = "dpopClientID"
    /// `dpopNonceRetry`: the nonce-retry switch's key.
    static let nonceRetryKey = "dpopNonceRetry"
    /// The longest client ID, in characters.
    static let maximumClientIDLength = 256

    /// `dpopTokenURL` (a URL, required), `dpopClientID` (a string, required), `dpopNonceRetry` (a
    /// switch, default `true`).
    public static let settingKeys = [
        ModeSettingKey(tokenURLKey, type: .url, required: true,
                       meaning: "Where DPoP-bound access tokens are fetched (client credentials grant): `https` (`http` on a loopback host only), no user info, query or fragment.",
                       validate: { value in
                           guard case .url(let url) = value else { return nil }
                           return ConfigurationError.problem(withSecureEndpoint: url)
                       }),
        ModeSettingKey(clientIDKey, type: .string, required: true,
                       meaning: "The client ID sent with each token request: 1 to 256 visible ASCII characters.",
                       validate: { value in
                           guard case .string(let clientID) = value else { return nil }
                           return problem(withClientID: clientID)
                       }),
        ModeSettingKey(nonceRetryKey, type: .bool, default: .bool(true),
                       meaning: "Whether a request the server answers with `use_dpop_nonce` is sent once more with the server's nonce."),
    ]

    private let signer: any DPoPSigner

    /// The mode whose providers sign with a fresh P-256 key (``P256DPoPSigner/init()``), one per mode:
    /// what the build-time registration uses.
    public init() {
        self.init(signer: P256DPoPSigner())
    }

    /// The mode whose providers sign with the app's key.
    public init(signer: any DPoPSigner) {
        self.signer = signer
    }

    /// A new ``DPoPProvider`` for the configuration's keys, sending its token requests through the
    /// client's transport, on the client's clock and diagnostics.
    ///
    /// - Throws: `ConfigurationError` for a missing or bad key (checked again: a registry of another
    ///   kind may not check), or ``ConfigurationError/dpopTransportMissing`` when the registry gave
    ///   no transport.
    public func makeProvider(for context: ProviderFactoryContext) throws -> any AuthorizationProvider {
        let settings = try context.modeSettings.checked(for: Self.settingKeys, providerName: Self.providerName)
        guard let tokenURL = settings.url(Self.tokenURLKey) else { throw ConfigurationError.missingKey(Self.tokenURLKey) }
        guard let clientID = settings.string(Self.clientIDKey) else { throw ConfigurationError.missingKey(Self.clientIDKey) }
        guard let transport = context.transport else { throw ConfigurationError.dpopTransportMissing }
        return try DPoPProvider(tokenURL: tokenURL, clientID: clientID, signer: signer, transport: transport, clock: context.clock,
                                diagnostics: context.diagnostics, nonceRetry: settings.bool(Self.nonceRetryKey) ?? true)
    }

    /// Why `clientID` is no client ID, or `nil`: 1 to 256 visible ASCII characters.
    static func problem(withClientID clientID: String) -> String? {
        let bytes = clientID.utf8
        guard !bytes.isEmpty, bytes.count <= maximumClientIDLength, bytes.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            return "must be 1 to \(maximumClientIDLength) visible ASCII characters (no spaces or control characters)"
        }
        return nil
    }
}
