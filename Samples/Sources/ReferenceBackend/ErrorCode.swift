extension ReferenceBackend {
    /// The `"error"` codes the backend answers with, in
    /// `{"success":false,"error":"<code>","message":"<human text>"}`.
    ///
    /// Signature failures on `POST /braze/apps/<appId>/data` are not answered in this shape but,
    /// as Braze does, in `"auth_error"` with a numeric ``ReferenceBackend/SignatureErrorCode``,
    /// checked in the order 26, 20, 24, 25, 27, 10, 22, 23, 21, 28 (see "SDK signatures (Braze
    /// style)" in ``ReferenceBackend``). That route answers in this shape only for a request it
    /// cannot read: ``unknownApp``, ``invalidRequest``, ``bodyTooLarge``.
    public enum ErrorCode: String, CaseIterable, Sendable, Codable {
        /// 401: no `Authorization` header.
        case missingAuthorization = "missing_authorization"
        /// 401: a scheme other than `Token` or `Bearer` (e.g. `Basic`).
        case unsupportedScheme = "unsupported_scheme"
        /// 401: `Token <key>` with a key not in ``Configuration/apiKeys``.
        case invalidAPIKey = "invalid_api_key"
        /// 403: a valid `Token` on an endpoint of ``Configuration/bearerRequiredEndpoints``.
        case bearerRequired = "bearer_required"
        /// 401: the bearer value is not a three-part JWT with JSON header and payload.
        case malformedToken = "malformed_token"
        /// 401: the JWT `alg` is not `RS256`.
        case unsupportedAlgorithm = "unsupported_algorithm"
        /// 401: no trusted public key verifies the signature.
        case invalidSignature = "invalid_signature"
        /// 401: the JWT has no `exp` claim.
        case missingExp = "missing_exp"
        /// 401: the JWT `exp` is not in the future.
        case tokenExpired = "token_expired"
        /// 401: ``Configuration/audience`` is set and the JWT `aud` does not name it.
        case invalidAudience = "invalid_audience"
        /// 401: ``Configuration/issuer`` is set and the JWT `iss` differs.
        case invalidIssuer = "invalid_issuer"
        /// 403: the JWT `sub` differs from the body's `customer_ids.registered`.
        case subjectMismatch = "subject_mismatch"
        /// 404: the project token in the path (or `project_id` query) is not the configured one.
        case unknownProject = "unknown_project"
        /// 400: a malformed request (bad login or signature-minting body, a `lifetimeSeconds` outside
        /// ``ReferenceBackend/tokenLifetimeRange``, missing `v=1` on in-app messages, a
        /// `/braze/apps/<appId>/data` body that is not an object with a `request_id`, or has a
        /// `user_id` or `events` of the wrong type, a bad `enforcement`).
        case invalidRequest = "invalid_request"
        /// 401: the `Authorization` header is longer than
        /// ``ReferenceBackend/maximumAuthorizationHeaderSize`` bytes; refused before any decoding.
        case tokenTooLarge = "token_too_large"
        /// 403: a bearer token on an Engagement endpoint, but the body does not name the customer in
        /// `customer_ids.registered` (missing, not a non-empty string, or the body is not a JSON object),
        /// so the token's subject cannot be checked.
        case customerIdMissing = "customer_id_missing"
        /// 413: the request body is longer than ``ReferenceBackend/maximumRequestBodySize`` bytes.
        case bodyTooLarge = "body_too_large"
        /// 401: `/ccai/exchange` got a payload with `alg: none` or no signature.
        case unsignedPayload = "unsigned_payload"
        /// 401: `/ccai/exchange` got a signed payload without `iat`, or without a numeric `exp`.
        case missingClaim = "missing_claim"
        /// 401: `/ccai/exchange` got a signed payload whose `iat` is neither a number nor a string of
        /// 1 to 12 digits (the vendor's Ruby sample sends `"1700000000"`), lies more than 60 s in the
        /// future, or whose `exp` is more than ``ReferenceBackend/maximumSignedPayloadLifetime`` after `iat`.
        case invalidClaims = "invalid_claims"
        /// 400: `/ccai/exchange` got a `phone` claim that is not E.164.
        case invalidPhone = "invalid_phone"
        /// 401: `/ccai/chats` got a bearer token that `/ccai/exchange` never issued.
        case invalidAuthToken = "invalid_auth_token"
        /// 404: `/braze/apps/<appId>/...` or `/__braze/apps/<appId>/...` names an app that is not in
        /// ``Configuration/signatureApps``.
        case unknownApp = "unknown_app"

        /// The HTTP status code the backend answers with for this error.
        public var httpStatus: Int {
            switch self {
            case .bearerRequired, .subjectMismatch, .customerIdMissing: 403
            case .unknownProject, .unknownApp: 404
            case .invalidRequest, .invalidPhone: 400
            case .bodyTooLarge: 413
            default: 401
            }
        }
    }
}
