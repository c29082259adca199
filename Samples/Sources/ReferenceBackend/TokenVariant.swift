/// The kinds of token the app-login role (``ReferenceBackend/issueToken(userId:variant:lifetime:audience:issuer:claims:)``
/// and `POST /app/login`) and the signature role (``ReferenceBackend/issueSignature(userId:variant:lifetime:audience:issuer:)``
/// and `POST /app/braze-signature`) can mint. Only ``valid`` passes verification; the numbers are
/// the ``ReferenceBackend/SignatureErrorCode`` a signature of that variant gets.
public enum TokenVariant: String, CaseIterable, Sendable, Codable {
    /// RS256, signed by the current trusted key, `exp` = now + lifetime.
    case valid
    /// Like ``valid`` but `exp` is 60 s in the past. Rejected with `token_expired`; 22 as a signature.
    case expired
    /// Like ``valid`` but without an `exp` claim. Rejected with `missing_exp`; 10 as a signature.
    case missingExp
    /// Signed HS256 with a secret. Rejected with `unsupported_algorithm`; 24 as a signature.
    case wrongAlgorithm
    /// Signed RS256 by a key the backend does not trust. Rejected with `invalid_signature`; 27 as a signature.
    case wrongKey
    /// Like ``valid`` but `sub` is the user ID followed by `-other`. Rejected with
    /// `subject_mismatch` where the request body names the user in `customer_ids.registered`; 21 as
    /// a signature.
    case otherSubject
}
