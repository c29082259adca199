internal import SDKAuthorizationPrimitives

/// What a provider answers for one request: the header field that carries the credential, or none.
///
/// ```swift
/// .bearer(jwt)                                   // Authorization: Bearer <jwt>
/// .apiKey(key, header: "X-API-Key")              // X-API-Key: <key>, your API's own header
/// .header("X-Braze-Auth-Signature", value: jwt)  // a header of the SDK author's choice
/// .authorization(scheme: "DPoP", token)          // Authorization: DPoP <token>, another scheme (Token...)
///     .adding("DPoP", value: proof)              //   with a field that goes with it (RFC 9449)
/// .omitted                                       // send this request without a credential
/// ```
///
/// Every credential passes one validation before it is sent: the header name must be an HTTP token,
/// neither `Idempotency-Key` (a queued request's idempotency key) nor one the transport owns (`Host`,
/// `Content-Length`, `Transfer-Encoding`, `Connection`, `Cookie`, `Content-Type`, any `Proxy-*`, a
/// `:` pseudo-header and the other framing and hop-by-hop fields), the value visible ASCII, and a
/// bearer token an RFC 6750 `b64token`. A credential that fails it fails its request locally with
/// ``RequestError/Code/invalidCredential``; nothing is sent. Fields added with ``adding(_:value:)``
/// pass the same validation, and go where the credential goes: they replace a caller's field of the
/// same name, and a redirect to another origin drops them. Its `description`, `debugDescription`
/// and mirror never show the secret.
public struct Credential: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    enum Kind: Hashable, Sendable { case bearer, header, omitted, scheme(String) }

    /// A header field sent with the credential (``adding(_:value:)``).
    struct Field: Hashable, Sendable {
        let name: String
        let value: String
    }

    let kind: Kind
    /// The header field's name, `Authorization` for ``bearer(_:)`` and ``authorization(scheme:_:)``; `nil` when omitted.
    public let headerName: String?
    /// The secret itself (the token, key or signature, without a scheme word); `nil` when omitted.
    /// A provider compares it with its own current token, for example when told of a rejection.
    public let value: String?
    /// The fields sent with it, in the order they were added.
    let fields: [Field]
    /// ``untilChallenged``: nothing is sent, and a rejection is the provider's to answer.
    let awaitsChallenge: Bool

    /// Whether this credential may be sent: ``omitted`` always may, unless a field was added to it.
    /// Judged once, when the credential is made, so a credential a provider holds (an API key) is
    /// not judged again on every request ("1 prepare" rows of BENCHMARKS.md).
    let verdict: HeaderFieldRules.Verdict

    private init(kind: Kind, headerName: String?, value: String?, fields: [Field] = [], awaitsChallenge: Bool = false,
                 verdict: HeaderFieldRules.Verdict? = nil) {
        self.kind = kind
        self.headerName = headerName
        self.value = value
        self.fields = fields
        self.awaitsChallenge = awaitsChallenge
        self.verdict = verdict ?? Self.ownVerdict(kind: kind, headerName: headerName, value: value)
    }

    /// `Authorization: Bearer <token>`.
    public static func bearer(_ token: String) -> Credential {
        Credential(kind: .bearer, headerName: "Authorization", value: token)
    }

    /// An API key sent as it is under the header your API names, e.g. `X-API-Key: <key>`: the same
    /// credential as ``header(_:value:)``, named for what it carries.
    public static func apiKey(_ key: String, header: String) -> Credential {
        Credential(kind: .header, headerName: header, value: key)
    }

    /// A header field of the SDK author's choice, e.g. `X-Braze-Auth-Signature: <jwt>`, its value
    /// sent as it is.
    public static func header(_ name: String, value: String) -> Credential {
        Credential(kind: .header, headerName: name, value: value)
    }

    /// `Authorization: <scheme> <token>`, for an authentication scheme other than `Bearer`: `DPoP`
    /// (RFC 9449), or `Token` (the Bloomreach Engagement API key's), say. The scheme must be an HTTP
    /// token and the token an RFC 6750 `b64token` (RFC 7235's `token68`), as a bearer token;
    /// `Bearer` gives ``bearer(_:)``.
    public static func authorization(scheme: String, _ token: String) -> Credential {
        if scheme.lowercased() == "bearer" { return .bearer(token) }
        return Credential(kind: .scheme(scheme), headerName: "Authorization", value: token)
    }

    /// This credential with a header field that goes with it: a proof of possession of the token
    /// (`DPoP: <proof JWT>`, RFC 9449) or a signature over the request, made for this request.
    ///
    /// The field passes the validation a credential passes, and must not name the credential's own
    /// header or a field added before; it is never shown in a description. A field cannot go with
    /// ``omitted``.
    public func adding(_ name: String, value: String) -> Credential {
        let field = Field(name: name, value: value)
        // Only the new field is judged: this credential's own verdict already covers the rest.
        return Credential(kind: kind, headerName: headerName, value: self.value, fields: fields + [field],
                          verdict: verdict == .valid ? judged(field) : verdict)
    }

    /// The names of the fields added with ``adding(_:value:)``, in order.
    public var addedFieldNames: [String] { fields.map(\.name) }

    /// Deliberately send this request without a credential (for example a host that must never see
    /// the token).
    public static let omitted = Credential(kind: .omitted, headerName: nil, value: nil)

    /// Send this request without a credential until the server challenges for one: a 401 or 403
    /// to it is passed to the provider's `credentialRejected` (``omitted``'s is not), which answers
    /// ``RejectionDecision/retryWithoutRefresh`` to send it again with the credential (Ktor's
    /// `sendWithoutRequest = false`).
    public static let untilChallenged = Credential(kind: .omitted, headerName: nil, value: nil, awaitsChallenge: true)

    /// Whether this is ``omitted`` or ``untilChallenged``: nothing is sent.
    public var isOmitted: Bool { kind == .omitted }

    /// The exact header value to send.
    var headerValue: String? {
        guard let value else { return nil }
        switch kind {
        case .bearer: return "Bearer \(value)"
        case .scheme(let scheme): return "\(scheme) \(value)"
        case .header: return value
        case .omitted: return nil
        }
    }

    /// The verdict on `field` added to this credential: a name that is an HTTP token, neither one
    /// the transport owns, the idempotency key's, the credential's own header nor a field added
    /// before, and a value of visible ASCII.
    private func judged(_ field: Field) -> HeaderFieldRules.Verdict {
        guard let headerName, HeaderFieldRules.isValidName(field.name), !HeaderFieldRules.isTransportOwnedName(field.name),
              !HeaderFieldRules.isIdempotencyKeyName(field.name), !HeaderFieldRules.sameName(headerName, field.name),
              !fields.contains(where: { HeaderFieldRules.sameName($0.name, field.name) }), HeaderFieldRules.check(field.value) == .valid
        else { return .forbiddenCharacters }
        return .valid
    }

    /// The verdict on the credential's own header field.
    private static func ownVerdict(kind: Kind, headerName: String?, value: String?) -> HeaderFieldRules.Verdict {
        guard let headerName, let value else { return .valid }
        switch kind {
        case .bearer:
            return HeaderFieldRules.checkBearer(value)
        case .scheme(let scheme):
            guard HeaderFieldRules.isValidName(scheme) else { return .forbiddenCharacters }
            return HeaderFieldRules.checkBearer(value)
        case .header, .omitted:
            // Never the idempotency key's header: a queue would send the credential as its key, or
            // overwrite one with the other.
            guard HeaderFieldRules.isValidName(headerName), !HeaderFieldRules.isTransportOwnedName(headerName),
                  !HeaderFieldRules.isIdempotencyKeyName(headerName) else { return .forbiddenCharacters }
            return HeaderFieldRules.check(value)
        }
    }

    /// What identifies the secret, for the refresh window and for a provider that remembers which
    /// credentials it handed out without keeping them: the kind, header and value, not the fields
    /// made for one request (a proof differs on every request carrying the same token). A hash with
    /// this process's seed: equal for the same secret in one run, different from run to run, and
    /// not the secret.
    public var secretFingerprint: Int {
        var hasher = Hasher()
        hasher.combine(kind)
        hasher.combine(headerName)
        hasher.combine(value)
        return hasher.finalize()
    }

    public var description: String {
        let own = switch kind {
        case .bearer: "Bearer credential \(Redaction.redact(value ?? ""))"
        case .scheme(let scheme): "\(LogText.plain(scheme, limit: 32)) credential \(Redaction.redact(value ?? ""))"
        case .header: "\(headerName ?? "") credential \(Redaction.redact(value ?? ""))"
        case .omitted: awaitsChallenge ? "omitted until challenged" : "omitted"
        }
        guard !fields.isEmpty else { return own }
        return own + " with " + fields.map { "\(LogText.plain($0.name, limit: 64)) \(Redaction.redact($0.value))" }.joined(separator: ", ")
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror {
        Mirror(self, children: ["credential": description], displayStyle: .struct)
    }
}
