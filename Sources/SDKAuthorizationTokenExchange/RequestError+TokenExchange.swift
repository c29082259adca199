import Foundation
import SDKAuthorization

// MARK: - Token-exchange mode

extension RequestError.Code {
    /// The host app's signer failed, or its signed payload is unusable (not a JWT, no `iat`, no
    /// numeric `exp`, expired). Not sent.
    public static let signingFailed = RequestError.Code(rawValue: "signingFailed")
    /// The host app's signer did not answer in time. Not sent.
    public static let signingTimedOut = RequestError.Code(rawValue: "signingTimedOut")
    /// The platform refused the signed payload, or its answer held no usable auth token. Not sent.
    public static let exchangeFailed = RequestError.Code(rawValue: "exchangeFailed")
}

extension RequestError {
    /// The signer failed or its payload is unusable.
    public static func signingFailed(reason: String, underlyingError: (any Error)? = nil) -> RequestError {
        RequestError(.signingFailed, "The payload could not be signed: \(reason); the request was not sent", underlyingError: underlyingError)
    }

    /// The signer did not answer in time.
    public static func signingTimedOut(after seconds: TimeInterval) -> RequestError {
        RequestError(.signingTimedOut, "The payload signer did not answer within \(seconds) seconds; the request was not sent")
    }

    /// The exchange failed.
    public static func exchangeFailed(reason: String, response: ServerResponse?, underlyingError: (any Error)?) -> RequestError {
        RequestError(.exchangeFailed, "The signed payload could not be exchanged: \(reason); the request was not sent", response: response, underlyingError: underlyingError)
    }
}
