import Foundation
import SDKAuthorization
import SDKAuthorizationModeKit

/// Why the server refused (or, under optional enforcement, would have refused) a request's
/// signature: the error codes of Braze-style SDK authentication.
///
/// A code the framework does not know is kept as ``unrecognized(_:)`` rather than dropped, so a
/// server that adds codes still reaches the app's failure subscribers with the number it sent.
public enum SignatureErrorCode: Sendable, Hashable, CustomStringConvertible {
    /// 10: the signature has no `exp` claim.
    case expirationRequired
    /// 20: the signature could not be decoded as a JWT.
    case decodingError
    /// 21: the signature's `sub` is not the request's user.
    case subjectMismatch
    /// 22: the signature has expired.
    case expired
    /// 23: the signature's claims are not acceptable (`sub`, `aud` or `iss`).
    case invalidPayload
    /// 24: the signature is not signed with the expected algorithm (RS256).
    case incorrectAlgorithm
    /// 25: the app's public key on the server is missing or unusable.
    case publicKeyError
    /// 26: the request carried no signature.
    case missingToken
    /// 27: none of the app's public keys verifies the signature.
    case noMatchingPublicKeys
    /// 28: the request's payload names another user than the signature's.
    case payloadUserIDMismatch
    /// A code this version does not know.
    case unrecognized(Int)

    /// The code for `rawValue`; an unknown number is ``unrecognized(_:)``.
    public init(rawValue: Int) {
        switch rawValue {
        case 10: self = .expirationRequired
        case 20: self = .decodingError
        case 21: self = .subjectMismatch
        case 22: self = .expired
        case 23: self = .invalidPayload
        case 24: self = .incorrectAlgorithm
        case 25: self = .publicKeyError
        case 26: self = .missingToken
        case 27: self = .noMatchingPublicKeys
        case 28: self = .payloadUserIDMismatch
        default: self = .unrecognized(rawValue)
        }
    }

    /// The number the server sent.
    public var rawValue: Int {
        switch self {
        case .expirationRequired: 10
        case .decodingError: 20
        case .subjectMismatch: 21
        case .expired: 22
        case .invalidPayload: 23
        case .incorrectAlgorithm: 24
        case .publicKeyError: 25
        case .missingToken: 26
        case .noMatchingPublicKeys: 27
        case .payloadUserIDMismatch: 28
        case .unrecognized(let code): code
        }
    }

    /// The vendor's name for the code, e.g. `EXPIRED (22)`.
    public var description: String {
        let name = switch self {
        case .expirationRequired: "EXPIRATION_REQUIRED"
        case .decodingError: "DECODING_ERROR"
        case .subjectMismatch: "SUBJECT_MISMATCH"
        case .expired: "EXPIRED"
        case .invalidPayload: "INVALID_PAYLOAD"
        case .incorrectAlgorithm: "INCORRECT_ALGORITHM"
        case .publicKeyError: "PUBLIC_KEY_ERROR"
        case .missingToken: "MISSING_TOKEN"
        case .noMatchingPublicKeys: "NO_MATCHING_PUBLIC_KEYS"
        case .payloadUserIDMismatch: "PAYLOAD_USER_ID_MISMATCH"
        case .unrecognized: "UNRECOGNIZED"
        }
        return "\(name) (\(rawValue))"
    }
}

/// An authentication failure reported by the server, as the app's failure subscribers receive it.
///
/// The server reports it in the response body:
/// `{"auth_error": {"error_code": 22, "reason": "..."}, "user_id": "..."}` with a 401 when it
/// enforces signatures, or inside a 2xx answer with `"optional": true` when it only verifies
/// (optional enforcement). The app usually answers by fetching a new signature for ``userId`` from
/// its server and calling ``SignatureAuthentication/setSignature(_:for:)``.
///
/// Its `description`, `debugDescription` and mirror show the signature redacted.
public struct SignatureFailure: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// Why the signature failed.
    public let errorCode: SignatureErrorCode
    /// The server's explanation (at most 512 characters are kept).
    public let reason: String
    /// The user the failed request belonged to; `nil` when neither the request nor the answer named one.
    public let userId: String?
    /// The signature (JWT) that failed; `nil` when the request carried none.
    public let signature: String?
    /// `true` when the server verified the signature but did not enforce it: the request was accepted.
    public let optional: Bool

    /// Creates a failure (for tests of an app's subscriber).
    public init(errorCode: SignatureErrorCode, reason: String, userId: String?, signature: String?, optional: Bool) {
        self.errorCode = errorCode
        self.reason = reason
        self.userId = userId
        self.signature = signature
        self.optional = optional
    }

    public var description: String {
        let user = userId.map { LogText.escaped($0, limit: 64) } ?? "no user"
        let signature = signature.map { "signature \(Redaction.redact($0))" } ?? "no signature"
        return "Signature failure \(errorCode) for \(user), \(signature)\(optional ? ", optional" : ""): \(LogText.escaped(reason, limit: 200))"
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror { Mirror(self, children: ["failure": description], displayStyle: .struct) }
}

extension SignatureFailure {
    /// The largest response body read for an `auth_error` (64 KB); a longer one is not parsed.
    static let maximumBodySize = 65_536

    /// The `auth_error` a response body reports, or `nil` when it reports none (or is not JSON,
    /// too large, or too deep). Never traps on hostile input.
    static func reported(in body: Data, signature: String?, requestUser: String?) -> SignatureFailure? {
        guard !body.isEmpty, body.count <= maximumBodySize,
              case .object(let root)? = try? BoundedJSONReader.parse(body, maximumDepth: 8),
              case .object(let error)? = root["auth_error"],
              let number = error["error_code"]?.numberValue,
              number.rounded() == number, abs(number) <= 1_000_000_000
        else { return nil }
        let reason = error["reason"]?.stringValue ?? ""
        let optional: Bool
        if case .bool(let flag)? = error["optional"] ?? root["optional"] { optional = flag } else { optional = false }
        return SignatureFailure(
            errorCode: SignatureErrorCode(rawValue: Int(number)),
            reason: String(reason.prefix(512)),
            userId: requestUser ?? root["user_id"]?.stringValue,
            signature: signature,
            optional: optional
        )
    }
}
