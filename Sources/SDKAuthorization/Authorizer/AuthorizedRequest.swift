import Foundation

/// A request with its credential attached, and what the authorizer needs to evaluate its response:
/// which provider issued which credential, for which attempt, and whether the request still
/// carries it after redirects.
///
/// Send ``request``; hand the response to ``RequestAuthorizer/evaluate(_:to:)``. Its description
/// and mirror show header names, never values.
public struct AuthorizedRequest: Sendable, CustomStringConvertible, CustomReflectable {
    /// The request to send now, credential attached.
    public internal(set) var request: OutgoingRequest
    /// The request as the caller made it, before authorization.
    public internal(set) var original: OutgoingRequest
    /// The endpoint's name, when the request was made from the policy's catalogue.
    public let endpoint: Endpoint.ID?
    /// The scheme the policy chose.
    public let scheme: AuthorizationScheme
    /// 1 for the first try, 2 for the retry after a rejection.
    public let attempt: Int
    /// When the whole request must be done; a retry keeps it.
    public let deadline: RequestDeadline?
    /// How many redirects led to ``request``.
    public internal(set) var redirectCount: Int = 0
    /// Whether ``request`` carries the credential: false when the scheme is ``AuthorizationScheme/none``,
    /// the provider omitted it, or a redirect to another origin dropped it. A rejection counts
    /// against a credential only while this is true.
    public internal(set) var carriesCredential: Bool
    /// Whether a redirect within the origin took off a credential the new hop may not carry
    /// (``RequestAuthorizer/redirect(_:after:)``), so the hop needs its own:
    /// ``RequestAuthorizer/authorize(redirected:)`` asks the provider of the hop's scheme for it.
    public internal(set) var needsNewCredential = false

    /// The provider that issued the credential, and what it was asked with.
    let issued: IssuedCredential?

    init(request: OutgoingRequest, original: OutgoingRequest, endpoint: Endpoint.ID?, scheme: AuthorizationScheme, attempt: Int,
         deadline: RequestDeadline?, carriesCredential: Bool, issued: IssuedCredential?) {
        self.request = request
        self.original = original
        self.endpoint = endpoint
        self.scheme = scheme
        self.attempt = attempt
        self.deadline = deadline
        self.carriesCredential = carriesCredential
        self.issued = issued
    }

    public var description: String {
        "\(request) scheme: \(scheme) attempt: \(attempt)\(carriesCredential ? " with credential" : " without credential")"
    }

    public var customMirror: Mirror {
        Mirror(self, children: ["request": request, "scheme": scheme, "attempt": attempt, "carriesCredential": carriesCredential], displayStyle: .struct)
    }
}

/// One credential a provider issued for one request.
struct IssuedCredential: Sendable {
    let provider: any AuthorizationProvider
    let credential: Credential
    let context: AuthorizationContext
    /// The provider's ``AuthorizationProvider/inspectsAcceptedResponses``, read once when it was issued.
    let inspectsAcceptedResponses: Bool
    /// The provider's ``AuthorizationProvider/endsByDeadline``, read once when it was issued: its
    /// answer hooks are then called in the request's own task, without a task and an alarm per call.
    var endsByDeadline = false
    /// The generation the provider was in when it was asked (``Credential/Issuer``); `nil` for
    /// a provider without generations.
    var generation: UInt64? = nil
}

extension AuthorizedRequest {
    /// What to do with the response to an authorized request, a set closed on purpose. A status the
    /// authorization layer has no opinion on (200, 404, 500) is ``accept``: the caller interprets it.
    public enum Evaluation: Sendable, Equatable {
        /// The response stands; nothing more to do for authorization.
        case accept
        /// Authorize the request again (``RequestAuthorizer/authorize(retrying:)``) and send it once more.
        case retry
        /// As ``retry``, after this many seconds.
        case retryAfter(TimeInterval)
        /// The request failed: its credential was rejected and will not be refreshed, or the refresh
        /// window is exhausted.
        case fail(RequestError)
    }
}
