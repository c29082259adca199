import Foundation
import SDKAuthorization
import SDKAuthorizationModeKit

extension RequestError.Code {
    /// The token endpoint refused the token request (its OAuth `error` code is in the message), or
    /// its answer held no usable DPoP token, or it could not be reached. Not sent.
    public static let dpopTokenRequestFailed = RequestError.Code(rawValue: "dpopTokenRequestFailed")
    /// The app's ``DPoPSigner`` failed or returned no 64-byte ES256 signature, or its public key is
    /// not a P-256 key. Not sent.
    public static let dpopSigningFailed = RequestError.Code(rawValue: "dpopSigningFailed")
}

extension RequestError {
    /// The token request failed. `reason` never holds a token or a proof; `response` is the token
    /// endpoint's refusal, never a 200 answer (whose body may hold a token).
    public static func dpopTokenRequestFailed(reason: String, response: ServerResponse? = nil, underlyingError: (any Error)? = nil) -> RequestError {
        RequestError(.dpopTokenRequestFailed, "The DPoP access token could not be fetched: \(reason); the request was not sent",
                     wasSent: false, response: response, underlyingError: underlyingError)
    }

    /// A proof could not be signed.
    public static func dpopSigningFailed(reason: String, underlyingError: (any Error)? = nil) -> RequestError {
        RequestError(.dpopSigningFailed, "The DPoP proof could not be signed: \(reason); the request was not sent", underlyingError: underlyingError)
    }
}

extension ConfigurationError.Code {
    /// A DPoP provider was asked for by a registry that gave it no transport to fetch tokens through.
    public static let dpopTransportMissing = ConfigurationError.Code(rawValue: "dpopTransportMissing")
}

extension ConfigurationError {
    /// The registry that made the provider gave no transport (``ProviderFactoryContext/transport``).
    public static var dpopTransportMissing: ConfigurationError {
        ConfigurationError(.dpopTransportMissing,
                           "The mode \(DPoPAuthorizationMode.providerName) fetches its tokens through the client's transport, and the registry gave none; make the client with a registry that passes its transport, or make a DPoPProvider directly",
                           name: DPoPAuthorizationMode.providerName)
    }
}
