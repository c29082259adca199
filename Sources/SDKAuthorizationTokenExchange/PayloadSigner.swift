import Foundation
import SDKAuthorization
import SDKAuthorizationModeKit

/// The payload the framework asks the host app to sign, already holding the claims the framework
/// fills (the SDK author's defaults, such as a device or push token and a default name, and
/// `payload_type`).
///
/// The app adds `identifier`, `name`, `email`, `phone` (E.164, e.g. `+14155550100`) as it knows
/// them and the required `iat` and `exp`, then signs it with the shared secret (HS256), ideally on
/// its own server.
public struct SigningPayload: Sendable, Equatable {
    /// What the signed payload is for.
    public enum Kind: String, Sendable, Equatable {
        /// To be exchanged for an end-user auth token.
        case authToken = "auth_token"
        /// Custom data sent along with a session.
        case customData = "custom_data"
    }

    /// What it is for.
    public let kind: Kind
    /// The claims filled so far.
    public var claims: [String: JWTClaimValue]

    /// Creates a payload.
    public init(kind: Kind, claims: [String: JWTClaimValue]) {
        self.kind = kind
        self.claims = claims
    }
}

/// How the host app signs a payload: an async function, or a callback with a completion.
///
/// ```swift
/// // Async: return the signed JWT, or throw.
/// let signer = PayloadSigner.async { payload in
///     try await myServer.sign(payload.claims)
/// }
///
/// // Completion: answer once with success or failure.
/// let signer = PayloadSigner.completion { payload, completion in
///     myServer.sign(payload.claims) { jwt, error in
///         completion(jwt.map { .success($0) } ?? .failure(error ?? SigningError.unknown))
///     }
/// }
/// ```
///
/// The framework accepts the first answer only: a second one is ignored and logged, never a crash.
/// An answer that does not come within ``TokenExchangeProvider/Options/signingTimeout`` fails the
/// waiting requests with `RequestError/Code/signingTimedOut`.
public struct PayloadSigner: Sendable {
    enum Form: Sendable {
        case async(@Sendable (SigningPayload) async throws -> String)
        case completion(@Sendable (SigningPayload, @escaping @Sendable (Result<String, any Error>) -> Void) -> Void)
    }

    let form: Form

    /// An async signing function: return the signed JWT or throw.
    public static func async(_ sign: @escaping @Sendable (SigningPayload) async throws -> String) -> PayloadSigner {
        PayloadSigner(form: .async(sign))
    }

    /// A callback that answers through `completion`, once.
    public static func completion(_ sign: @escaping @Sendable (SigningPayload, @escaping @Sendable (Result<String, any Error>) -> Void) -> Void) -> PayloadSigner {
        PayloadSigner(form: .completion(sign))
    }
}
