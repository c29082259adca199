import Foundation
internal import SDKAuthorizationPrimitives

/// What a provider is told about the request it is asked to authorize.
///
/// It sees the whole request (method, URL with path and query, header fields, body), so a provider
/// that signs payloads can sign this one, and the endpoint name when the request was made from the
/// policy's catalogue.
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
    /// The authorizer's refresh window, for a provider to count each refresh it starts
    /// (``AuthorizationContext/RefreshWindowGate/admitRefresh(replacing:)``); `nil` for a context made by hand. A provider
    /// that asks another provider for a credential on a context of its own (one shared by several
    /// requests) hands the gate on by setting it there, so the window bounds that provider's refreshes too.
    public var refreshWindow: AuthorizationContext.RefreshWindowGate?
    /// For a retry: the provider that issued the rejected credential, and the generation it was
    /// issued in, as the authorizer saw it or as the provider noted it behind whatever decorator
    /// wraps it (read with ``requiredGeneration(for:)``).
    var issuedGeneration: IssuedGeneration?

    /// For a retry, the generation `provider` must still be in to serve it (``Credential/Issuer``):
    /// the one the rejected credential was issued in, as the authorizer saw it or as the provider
    /// noted it (``noteIssued(by:generation:)``) behind whatever decorator wraps it; `nil` for a
    /// first attempt, or when another provider issued the credential. A provider serves the retry
    /// only while that generation is current, so a logout in between fails it as cleared instead
    /// of refreshing for it.
    public func requiredGeneration(for provider: AnyObject) -> UInt64? {
        issuedGeneration?.generation(for: provider)
    }
    /// Where the request's providers note the generation they issue its credential in
    /// (``noteIssued(by:generation:)``): one for the whole request, made by the authorizer; `nil`
    /// for a context made by hand.
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
    /// the request's rejection and its retry as ``RequestError/Code/credentialCleared`` (nothing
    /// refreshed for it, never sent again with a credential fetched after the logout) even when the
    /// app installed the provider behind a decorator of its own, whose type is all the authorizer
    /// sees: the retry's ``requiredGeneration(for:)`` then names `provider` too. Does nothing for a context
    /// made by hand.
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
    /// stays. Not counted in the authorizer's ``AuthorizationOptions/RefreshWindow``, which bounds refreshes; still one
    /// retry per request.
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
/// ``AuthorizationContext/deadline``. Through ``AuthorizedHTTPClient`` and
/// ``RequestAuthorizer/data(for:using:endpoint:)`` it is asked in a task that the deadline
/// cancels, so a wait that ends on cancellation ends at the deadline too, unless it declares
/// ``endsByDeadline``. An error it throws fails that request with
/// ``RequestError/Code/providerFailed``; nothing is sent. A ``RequestError`` it throws is passed on
/// as it is.
public protocol AuthorizationProvider: Sendable {
    /// The credential for one request.
    func credential(for context: AuthorizationContext) async throws -> Credential

    /// Called when the server answered 401 or 403 to a request that carried `credential`: the
    /// response (status, header fields such as `WWW-Authenticate`, body) is the one that answered
    /// the request carrying it, never one from another origin after a redirect dropped it.
    /// The default answers ``RejectionDecision/fail``.
    func credentialRejected(_ credential: Credential, response: ServerResponse, context: AuthorizationContext) async -> RejectionDecision

    /// Called with the final answer to a request that carried `credential` when it is not a 401 or
    /// 403 (those go to ``credentialRejected(_:response:context:)``), on every path: ``AuthorizedHTTPClient``,
    /// ``RequestAuthorizer/send(_:endpoint:through:)``, the `URLSession` convenience, an OpenAPI
    /// middleware, and ``RequestAuthorizer/evaluate(_:to:)`` for a stack that runs the steps itself.
    /// It is a place to read what a server reports beside accepting the credential (a signature
    /// verified but not enforced); it cannot change the outcome.
    ///
    /// Called only when ``inspectsAcceptedResponses`` is `true`. The response is the one that
    /// answered the request carrying the credential (or going without one because the provider
    /// answered ``Credential/omitted``), never one from another origin after a redirect, and its
    /// body is whatever the stack read (an OpenAPI middleware reads a body of known length up to its
    /// limit, so a streamed one may be empty). The default does nothing.
    ///
    /// The request waits for it (as for ``credentialRejected(_:response:context:)``) only until its
    /// deadline or its cancellation: a hook still running then is cancelled, and the request fails
    /// with ``RequestError/Code/deadlineExceeded`` or ``RequestError/Code/cancelled``, whatever the
    /// provider declares: it runs beside the request, in a task of its own.
    func credentialAccepted(_ credential: Credential, response: ServerResponse, context: AuthorizationContext) async

    /// Whether ``credentialAccepted(_:response:context:)`` wants to be called. The default, `false`,
    /// keeps the loop from calling it and a streaming stack from reading bodies for it. Read once,
    /// when the provider is installed (as ``endsByDeadline``): an answer that changes later is not seen.
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
    /// or at cancellation, whichever comes first, without help: it answers at once, or bounds its
    /// own waits as the built-in providers do. Its rejection hook is then called in the request's
    /// task; a provider that says nothing has each hook call run in a task the deadline abandons
    /// (an accepted-answer hook always runs in one).
    ///
    /// A provider that says so is asked in the request's own task, on every path. Any other is asked
    /// in a task of its own that the request waits for only until its deadline or cancellation,
    /// which is what a provider that may wait on something it cannot bound needs. That task starts
    /// on the caller's thread while fewer calls than the cooperative pool has threads, less one,
    /// do so (about a microsecond per call), and otherwise runs on threads of its own, outside the
    /// pool (some microseconds more). So a provider that blocks its thread, though it must not,
    /// holds at most that many of the pool's threads and delays no request that does not use it;
    /// one that held a caller's thread for half a second is named in a warning, once, and its
    /// calls run on threads of their own from then. A call a request gave up on at its deadline and that still runs keeps its place:
    /// past 64 of them for one provider, its next requests fail at once with
    /// ``RequestError/Code/tooManyAbandonedCalls`` until those calls end. Every built-in provider
    /// says so. The default is `false`. It is read once, when the provider is installed (the
    /// authorizer's initializer, ``RequestAuthorizer/setProvider(_:for:)``): an answer that changes
    /// later is not seen.
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
