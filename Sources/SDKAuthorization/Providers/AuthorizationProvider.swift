import Foundation
internal import SDKAuthorizationPrimitives

/// What a provider is told about the request it is asked to authorize: the whole request (method,
/// URL with path and query, header fields, body), so a provider that signs payloads can sign it.
public struct AuthorizationContext: Sendable, Equatable, CustomStringConvertible {
    /// The request as the caller made it, before any credential was added.
    public let request: OutgoingRequest
    /// The endpoint's name in the policy, or `nil` for a request matched by a rule or sent by
    /// another HTTP stack.
    public let endpoint: Endpoint.ID?
    /// The scheme the policy chose for it.
    public let scheme: AuthorizationScheme
    /// 1 for the first try; 2 for the single retry after a rejected credential.
    public let attempt: Int
    /// When the whole request must be done. A provider that waits (for a refresh, a network call)
    /// ends its wait by then; every built-in provider does. `nil` when the request has none (a
    /// context made by hand).
    public let deadline: RequestDeadline?
    /// The authorizer's refresh window (``AuthorizationContext/RefreshWindowGate``); `nil` for a
    /// context made by hand. A provider that asks another provider for a credential on a context of
    /// its own (one shared by several requests) hands the gate on by setting it there.
    public var refreshWindow: AuthorizationContext.RefreshWindowGate?
    /// For a retry: the provider that issued the rejected credential, and the generation it was
    /// issued in (read with ``requiredGeneration(for:)``).
    var issuedGeneration: IssuedGeneration?

    /// For a retry, the generation `provider` must still be in to serve it (``Credential/Issuer``):
    /// the one the rejected credential was issued in, as the authorizer saw it or as the provider
    /// noted it (``noteIssued(by:generation:)``) behind whatever decorator wraps it; `nil` for a
    /// first attempt, or when another provider issued the credential.
    public func requiredGeneration(for provider: AnyObject) -> UInt64? {
        issuedGeneration?.generation(for: provider)
    }
    /// Where the request's providers note their generations (``CredentialIssuance``), made by the
    /// authorizer; `nil` for a context made by hand.
    var issuance: CredentialIssuance?

    /// Creates a context for `request`.
    public init(request: OutgoingRequest, endpoint: Endpoint.ID? = nil, scheme: AuthorizationScheme = .bearer, attempt: Int = 1,
                deadline: RequestDeadline? = nil) {
        self.request = request
        self.endpoint = endpoint
        self.scheme = scheme
        self.attempt = attempt
        self.deadline = deadline
    }

    /// Creates a context for a bodiless request to `url` (handy in a provider's own tests).
    public init(endpoint: Endpoint.ID?, url: URL, method: String = "GET", scheme: AuthorizationScheme = .bearer, attempt: Int = 1,
                deadline: RequestDeadline? = nil) {
        self.init(request: OutgoingRequest(method: method, url: url), endpoint: endpoint, scheme: scheme, attempt: attempt, deadline: deadline)
    }

    /// The URL the request goes to.
    public var url: URL { request.url }

    /// Notes that `provider` issues this request's credential in `generation` (its
    /// ``Credential/Issuer/credentialGeneration``, read before it waited for the credential).
    ///
    /// A provider with generations calls it as it returns a credential, so that a logout since fails
    /// the request as ``Credential/Issuer`` describes even when the app installed the provider behind
    /// a decorator of its own, whose type is all the authorizer sees: the retry's
    /// ``requiredGeneration(for:)`` then names `provider` too. Does nothing for a context made by hand.
    public func noteIssued(by provider: any Credential.Issuer, generation: UInt64) {
        issuance?.note(provider, generation: generation)
    }

    /// Equal when the request, endpoint, scheme and attempt are; the deadline is not compared.
    public static func == (lhs: AuthorizationContext, rhs: AuthorizationContext) -> Bool {
        lhs.request == rhs.request && lhs.endpoint == rhs.endpoint && lhs.scheme == rhs.scheme && lhs.attempt == rhs.attempt
    }

    /// The endpoint's name, or the method and URL (without its query) when there is none: what
    /// diagnostics call the request.
    public var requestName: String { Self.name(of: request, endpoint: endpoint) }

    /// The endpoint's name (escaped), or the method and URL without its query.
    static func name(of request: OutgoingRequest, endpoint: Endpoint.ID?) -> String {
        endpoint?.description ?? "\(request.method) \(LogText.url(request.url))"
    }

    public var description: String {
        "\(requestName) (\(scheme), attempt \(attempt))"
    }
}

/// What to do after the server rejected a request's credential with 401 or 403.
public enum RejectionDecision: Sendable, Equatable {
    /// Fail the request with a ``RequestError`` whose code is ``RequestError/Code/authorizationRejected``.
    case fail
    /// Ask the provider again and send the request once more, now. A request is retried at most once.
    case retry
    /// As ``retry``, after waiting this many seconds (on the monotonic clock).
    case retryAfter(TimeInterval)
    /// As ``retry``, for a rejection that is not about the credential's freshness: the server asks
    /// for something the provider puts in its next answer (a DPoP nonce, RFC 9449 §8) and the token
    /// stays. Not counted in the ``AuthorizationOptions/RefreshWindow``; still one retry per request.
    case retryWithoutRefresh
}

/// Supplies the credential for requests, one call per request.
///
/// This is the native, asynchronous provider shape. For the Exponea-compatible synchronous shape,
/// see `AuthorizationProviderType` (in `SDKAuthorizationEngagement`).
///
/// ```swift
/// struct SessionTokenProvider: AuthorizationProvider {
///     let session: UserSession
///     func credential(for context: AuthorizationContext) async throws -> Credential {
///         .bearer(try await session.currentJWT())
///     }
/// }
/// ```
///
/// # Implementation requirements
/// `credential(for:)` is called concurrently from many tasks; it must not block a thread (await
/// instead), should honour task cancellation, and should end any wait by the request's
/// ``AuthorizationContext/deadline``: unless it declares ``endsByDeadline``, it is asked in a task
/// that the deadline cancels. An error it throws fails that request with
/// ``RequestError/Code/providerFailed``, nothing sent; a ``RequestError`` it throws is passed on as it is.
public protocol AuthorizationProvider: Sendable {
    /// The credential for one request.
    func credential(for context: AuthorizationContext) async throws -> Credential

    /// Called when the server answered 401 or 403 to a request that carried `credential`: the
    /// response (status, header fields such as `WWW-Authenticate`, body) is the one that answered
    /// the request carrying it, never one from another origin after a redirect dropped it.
    /// The default answers ``RejectionDecision/fail``.
    func credentialRejected(_ credential: Credential, response: ServerResponse, context: AuthorizationContext) async -> RejectionDecision

    /// Called, when ``inspectsAcceptedResponses`` is `true`, with the final answer to a request that
    /// carried `credential` when it is not a 401 or 403, on every path: ``AuthorizedHTTPClient``,
    /// ``RequestAuthorizer/send(_:endpoint:through:)``, the `URLSession` convenience, an OpenAPI
    /// middleware, and ``RequestAuthorizer/evaluate(_:to:)`` for a stack that runs the steps itself.
    /// It is a place to read what a server reports beside accepting the credential (a signature
    /// verified but not enforced); it cannot change the outcome. The default does nothing.
    ///
    /// The response is the one that answered the request carrying the credential (or going without
    /// one because the provider answered ``Credential/omitted``), never one from another origin
    /// after a redirect; its body is whatever the stack read (an OpenAPI middleware reads a body of
    /// known length up to its limit, so a streamed one may be empty). The hook runs in a task of its
    /// own, whatever the provider declares, which the request waits for only until its deadline or
    /// cancellation: it then fails with ``RequestError/Code/deadlineExceeded`` or ``RequestError/Code/cancelled``.
    func credentialAccepted(_ credential: Credential, response: ServerResponse, context: AuthorizationContext) async

    /// Whether ``credentialAccepted(_:response:context:)`` wants to be called. The default, `false`,
    /// keeps the loop from calling it and a streaming stack from reading bodies for it. Read once,
    /// when the provider is installed (the authorizer's initializer,
    /// ``RequestAuthorizer/setProvider(_:for:)``): an answer that changes later is not seen.
    var inspectsAcceptedResponses: Bool { get }

    /// Called when the app's user identity changes (a new customer, `anonymize`): drop anything
    /// cached for the old identity. The default does nothing.
    func identityDidChange() async

    /// Called when the app's user changes, with the new user: `identity` is their ID, as the app
    /// names it (the key of a `CredentialStore` slot), or `nil` when no one is signed in.
    /// ``AuthorizedHTTPClient/identityDidChange(to:)`` calls it on every provider.
    ///
    /// # Implementation requirements
    /// Drop everything cached for the old user. A provider that keeps credentials per user in a
    /// `CredentialStore` moves to `identity`'s slot; with `nil` (or an identity it cannot key a
    /// slot by) it keeps no user: it stores nothing and fails the requests that need a credential
    /// (``RequestError/noUserNamed(endpoint:)``) until it is given one, so a token fetched for the
    /// next user is never saved in the previous user's slot. The default calls
    /// ``identityDidChange()``.
    func identityDidChange(to identity: String?) async

    /// Whether every wait in ``credential(for:)``, ``credentialRejected(_:response:context:)`` and
    /// ``credentialAccepted(_:response:context:)`` ends by the context's ``AuthorizationContext/deadline``
    /// or at cancellation without help: it answers at once, or bounds its own waits as every
    /// built-in provider does. Such a provider is asked, and its rejection hook called, in the
    /// request's own task, on every path.
    ///
    /// Any other is asked, and its hooks called, in a task of its own that the request waits for
    /// only until its deadline or cancellation, which is what a provider that may wait on something
    /// it cannot bound needs. That task starts on the caller's thread while fewer calls than the
    /// cooperative pool has threads, less one, do so (about a microsecond per call), and otherwise
    /// runs on threads of its own, outside the pool (some microseconds more). So a provider that
    /// blocks its thread, though it must not, holds at most that many of the pool's threads and
    /// delays no request that does not use it; one that held a caller's thread for half a second is
    /// named in a warning, once, and its calls run on threads of their own from then. Past 64 calls
    /// that its requests gave up on and that still run, its next requests fail at once with
    /// ``RequestError/Code/tooManyAbandonedCalls`` until those calls end. The default is `false`;
    /// it is read once, as ``inspectsAcceptedResponses`` is.
    var endsByDeadline: Bool { get }
}

extension AuthorizationProvider {
    public func credentialRejected(_ credential: Credential, response: ServerResponse, context: AuthorizationContext) async -> RejectionDecision {
        .fail
    }

    public func credentialAccepted(_ credential: Credential, response: ServerResponse, context: AuthorizationContext) async {}

    public var inspectsAcceptedResponses: Bool { false }

    public func identityDidChange() async {}

    public func identityDidChange(to identity: String?) async { await identityDidChange() }

    public var endsByDeadline: Bool { false }
}
