import Foundation

/// The one HTTP client an SDK sends its calls through, built on the ``RequestAuthorizer`` seam: it
/// authorizes each request, sends it through an ``HTTPTransport``, follows redirects safely,
/// retries once when the provider asks, and classifies the answer.
///
/// Make one around any policy and providers, then send from the catalogue, with path parameters
/// and a query, or send any request:
///
/// ```swift
/// let client = AuthorizedHTTPClient(authorizer: try RequestAuthorizer(policy: policy, providers: [.bearer: provider]))
/// let inbox = try await client.send(.appInboxFetch, body: body)
/// let user = try await client.send("userInbox", parameters: ["userId": "42"], query: [URLQueryItem(name: "page", value: "2")])
/// let other = try await client.send(OutgoingRequest(method: "GET", url: url))
/// ```
///
/// An Engagement SDK makes it from its configuration instead, with the provider passed directly or
/// found by name, as the Exponea SDKs find `ExponeaAuthProvider` (`SDKAuthorizationEngagement`).
/// Configuration is checked when the client is created: a bad provider setup throws a
/// ``ConfigurationError`` (thrown, not also logged), and the client does not exist.
public final class AuthorizedHTTPClient: Sendable, CustomStringConvertible, CustomReflectable {
    /// The authorization seam this client sends through.
    public let authorizer: RequestAuthorizer

    private let transport: any HTTPTransport
    /// The transport's ``HTTPTransport/endsByDeadline``, read once, here: whether its sends must be
    /// bounded is decided when it is installed.
    private let transportEndsByDeadline: Bool
    /// Run by ``identityDidChange(to:)`` in place of telling the providers, when set.
    private let identityChange: (@Sendable (String?) async throws(ConfigurationError) -> Void)?

    /// Creates a client around `authorizer` that sends through `transport`, with what an identity
    /// change does: for a module that makes clients from a configuration of its own and re-creates
    /// their providers when the user changes, as the Engagement mode's configuration initializers do.
    /// ``identityDidChange(to:)`` runs `identityChange` with the new user (checked; `nil` for no one)
    /// in place of telling the authorizer's providers, and rethrows its error; a `nil` closure tells
    /// them (``RequestAuthorizer/identityDidChange(to:)``). One that runs must pass the user on to
    /// every provider it keeps.
    public init(
        authorizer: RequestAuthorizer, transport: any HTTPTransport,
        identityChange: (@Sendable (String?) async throws(ConfigurationError) -> Void)?
    ) {
        self.authorizer = authorizer
        self.transport = transport
        self.transportEndsByDeadline = transport.endsByDeadline
        self.identityChange = identityChange
    }

    /// Creates a client around any authorizer: its policy, providers, options, clock and diagnostics.
    public convenience init(authorizer: RequestAuthorizer, transport: any HTTPTransport = URLSessionHTTPTransport()) {
        self.init(authorizer: authorizer, transport: transport, identityChange: nil)
    }

    /// The authorizer's summary; never a credential.
    public var description: String { "AuthorizedHTTPClient(\(authorizer))" }

    public var customMirror: Mirror { Mirror(self, children: ["authorizer": authorizer.description], displayStyle: .class) }

    /// The endpoint catalogue, rules and scheme table in force.
    public var policy: AuthorizationPolicy { authorizer.policy }

    /// The limits in force.
    public var options: AuthorizationOptions { authorizer.options }

    /// The customer-token (bearer) provider, or `nil` when there is none. A built-in mode's provider
    /// is reached through it, e.g. `client.provider as? IDTokenStore`.
    public var provider: (any AuthorizationProvider)? { authorizer.provider(for: .bearer) }

    /// Tells the client that the user changed: the one call for a logout, a login or a switch of
    /// user. `identity` is the new user's ID (1 to 100 UTF-8 bytes, compared as exact bytes, the key
    /// of their `CredentialStore` slot), or `nil` when no one is signed in (logout, `anonymize`).
    ///
    /// ```swift
    /// try await client.identityDidChange(to: "bob-7")   // bob logged in (alice logged out)
    /// try await client.identityDidChange(to: nil)       // logout: no one is signed in
    /// ```
    ///
    /// Every provider is told through ``AuthorizationProvider/identityDidChange(to:)``, and forgets
    /// the previous user's credential; one that keeps its token in a `CredentialStore`
    /// (`TokenExchangeProvider`, `IDTokenStore` with a credential store) removes the previous user's
    /// stored token and moves to `identity`'s slot, or keeps no user with `nil`, as that method
    /// says. The signature mode makes `identity` its current user, so requests queued from now on go
    /// in that user's lane. A provider class found by name (`AuthorizationProviderType`) is then
    /// loaded again from the registry, a new instance, as the vendor SDKs do, and swapped in only
    /// once it has loaded: requests in flight keep the provider they read, and none finds the client
    /// without one. With advanced auth disabled nothing is looked up.
    ///
    /// - Throws: ``ConfigurationError/invalidValue(key:reason:)`` (key `identity`) for an identity
    ///   that is empty, longer than 100 UTF-8 bytes or holds a control character: nothing changes
    ///   then. ``ConfigurationError`` when the provider class can no longer be loaded; requests that
    ///   need it then fail with ``RequestError/Code/noProvider`` rather than use the old user's provider.
    public func identityDidChange(to identity: String?) async throws(ConfigurationError) {
        if let identity { try Credential.Identity.checkUser(identity, key: "identity") }
        guard let identityChange else {
            await authorizer.identityDidChange(to: identity)
            return
        }
        try await identityChange(identity)
    }

    /// Tells the client that the user's identity changed without naming the new user: as
    /// ``identityDidChange(to:)`` with `nil` (no one is signed in).
    public func identityDidChange() async throws(ConfigurationError) {
        try await identityDidChange(to: nil)
    }

    // MARK: Sending

    /// Sends the request ``RequestAuthorizer/request(for:parameters:query:body:headers:)`` makes for
    /// a catalogue endpoint, with the credential its scheme names. `parameters` are the values of
    /// the endpoint's `<name>` path parameters (`projectToken` comes from the configuration), `query`
    /// items go after the template's own, and a header field whose name is not an HTTP token or
    /// whose value holds a character no header can carry fails the request with
    /// ``RequestError/Code/invalidHeader``.
    ///
    /// - Returns: The 2xx response.
    /// - Throws: ``RequestError``.
    public func send(
        _ endpoint: Endpoint.ID,
        parameters: [String: String] = [:],
        query: [URLQueryItem] = [],
        body: Data? = nil,
        headers: [String: String] = [:]
    ) async throws(RequestError) -> ServerResponse {
        let request = try authorizer.request(for: endpoint, parameters: parameters, query: query, body: body, headers: headers)
        return try await send(request, endpoint: endpoint)
    }

    /// Sends any request: the policy gives it the scheme of the catalogue endpoint or rule it
    /// matches, or none.
    ///
    /// - Returns: The 2xx response.
    /// - Throws: ``RequestError``.
    public func send(_ request: OutgoingRequest) async throws(RequestError) -> ServerResponse {
        try await send(request, endpoint: nil)
    }

    /// Sends one request through the authorizer's request loop, ended by the request's deadline
    /// (``AuthorizationOptions/requestDeadline``) without cancelling the caller; the 2xx check is
    /// the client's own.
    private func send(_ request: OutgoingRequest, endpoint: Endpoint.ID?) async throws(RequestError) -> ServerResponse {
        let response = try await authorizer.send(request, endpoint: endpoint, within: transport, endsByDeadline: transportEndsByDeadline)
        guard (200..<300).contains(response.statusCode) else {
            throw RequestError.httpError(response: response, endpoint: endpoint ?? authorizer.scheme(for: request).endpoint).naming(request)
        }
        return response
    }
}
