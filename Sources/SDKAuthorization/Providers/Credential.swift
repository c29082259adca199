/// What a provider answers for one request: the header field that carries the credential, or none.
///
/// ```swift
/// .bearer(jwt)                                   // Authorization: Bearer <jwt>
/// .apiKey(key, header: "X-API-Key")              // X-API-Key: <key>, your API's own header
/// .apiKey(key)                                   // Authorization: Token <key> (Bloomreach Engagement)
/// .header("X-Braze-Auth-Signature", value: jwt)  // a header of the SDK author's choice
/// .omitted                                       // send this request without a credential
/// ```
///
/// Every credential passes one validation before it is sent: the header name must be an HTTP token
/// and not one the transport owns (`Host`, `Content-Length`, `Transfer-Encoding`, `Connection`,
/// `Cookie`, `Content-Type`, any `Proxy-*`, a `:` pseudo-header and the other framing and hop-by-hop
/// fields), the value visible ASCII, and a bearer token an RFC 6750 `b64token`. A credential that
/// fails it fails its request locally with ``RequestError/Code/invalidCredential``; nothing is sent.
///
/// Its `description`, `debugDescription` and mirror never show the secret.
public struct Credential: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    enum Kind: Hashable, Sendable { case bearer, apiKey, header, omitted }

    let kind: Kind
    /// The header field's name, `Authorization` for bearer and API-key credentials; `nil` when omitted.
    public let headerName: String?
    /// The secret itself (the token, key or signature, without a scheme word); `nil` when omitted.
    ///
    /// A provider compares it with its own current token, for example when told of a rejection.
    public let value: String?

    private init(kind: Kind, headerName: String?, value: String?) {
        self.kind = kind
        self.headerName = headerName
        self.value = value
    }

    /// `Authorization: Bearer <token>`.
    public static func bearer(_ token: String) -> Credential {
        Credential(kind: .bearer, headerName: "Authorization", value: token)
    }

    /// `Authorization: Token <key>`, the Bloomreach Engagement (Exponea) API-key scheme. For your own
    /// API's key under a header of its own, use ``apiKey(_:header:)``.
    public static func apiKey(_ key: String) -> Credential {
        Credential(kind: .apiKey, headerName: "Authorization", value: key)
    }

    /// An API key sent as it is under the header your API names, e.g. `X-API-Key: <key>`.
    ///
    /// The same credential as ``header(_:value:)``, named for what it carries. A name the transport
    /// owns (`Host`, `Cookie`, `Content-Type`, `Proxy-*`...) fails the request locally.
    public static func apiKey(_ key: String, header: String) -> Credential {
        Credential(kind: .header, headerName: header, value: key)
    }

    /// A header field of the SDK author's choice, e.g. `X-Braze-Auth-Signature: <jwt>`. The value is
    /// sent as it is. A name the transport owns (`Host`, `Cookie`, `Content-Type`, `Proxy-*`...)
    /// fails the request locally.
    public static func header(_ name: String, value: String) -> Credential {
        Credential(kind: .header, headerName: name, value: value)
    }

    /// Deliberately send this request without a credential (for example a host that must never see
    /// the token).
    public static let omitted = Credential(kind: .omitted, headerName: nil, value: nil)

    /// Whether this is ``omitted``.
    public var isOmitted: Bool { kind == .omitted }

    /// The exact header value to send.
    var headerValue: String? {
        guard let value else { return nil }
        switch kind {
        case .bearer: return "Bearer \(value)"
        case .apiKey: return "Token \(value)"
        case .header: return value
        case .omitted: return nil
        }
    }

    /// Whether this credential may be sent: ``omitted`` always may.
    var verdict: HeaderFieldRules.Verdict {
        guard let headerName, let value else { return .valid }
        switch kind {
        case .bearer:
            return HeaderFieldRules.checkBearer(value)
        case .apiKey:
            return HeaderFieldRules.check(value)
        case .header, .omitted:
            guard HeaderFieldRules.isValidName(headerName), !HeaderFieldRules.isTransportOwnedName(headerName) else { return .forbiddenCharacters }
            return HeaderFieldRules.check(value)
        }
    }

    public var description: String {
        switch kind {
        case .bearer: "Bearer credential \(Redaction.redact(value ?? ""))"
        case .apiKey: "Token credential \(Redaction.redact(value ?? ""))"
        case .header: "\(headerName ?? "") credential \(Redaction.redact(value ?? ""))"
        case .omitted: "omitted"
        }
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror {
        Mirror(self, children: ["credential": description], displayStyle: .struct)
    }
}
