import Foundation

/// The one HTTP client an SDK sends its calls through, built on the ``RequestAuthorizer`` seam: it
/// authorizes each request, sends it through an ``HTTPTransport``, follows redirects safely,
/// retries once when the provider asks, and classifies the answer.
///
/// Three ways to make one:
///
/// ```swift
/// // 1. The provider passed directly.
/// let client = try AuthorizedHTTPClient(configuration: configuration, provider: SessionTokenProvider(session: session))
///
/// // 2. The provider found by name, as the Exponea SDKs find `ExponeaAuthProvider`.
/// let registry = ProviderRegistry()
/// registry.register(ExampleAuthProvider.self, as: "ExponeaAuthProvider")
/// let client = try AuthorizedHTTPClient(configuration: configuration, registry: registry)
///
/// // 3. Any policy and providers, for an SDK that is not an Engagement SDK.
/// let client = AuthorizedHTTPClient(authorizer: try RequestAuthorizer(policy: policy, providers: [.bearer: provider]))
/// ```
///
/// Then send from the catalogue, with path parameters and a query, or send any request:
///
/// ```swift
/// let inbox = try await client.send(.appInboxFetch, body: body)
/// let user = try await client.send("userInbox", parameters: ["userId": "42"], query: [URLQueryItem(name: "page", value: "2")])
/// let other = try await client.send(OutgoingRequest(method: "GET", url: url))
/// ```
///
/// Configuration is checked when the client is created: a bad provider setup throws a
/// ``ConfigurationError`` (also logged at error level), and the client does not exist.
public final class AuthorizedHTTPClient: Sendable, CustomStringConvertible, CustomReflectable {
    /// Where the bearer provider comes from, and so what an identity change does.
    private enum ProviderSource: Sendable {
        /// Built from a configuration with advanced auth disabled: nothing to load, ever.
        case none
        /// Given directly, or a whole authorizer given: providers are told, never re-created.
        case fixed
        /// Looked up by name in a registry; a provider class is re-created on identity change.
        case registry(ProviderRegistry, isClassBased: Locked<Bool>)
    }

    /// The authorization seam this client sends through.
    public let authorizer: RequestAuthorizer
    /// The configuration in force, when the client was made from one.
    public let configuration: AuthorizationConfiguration?

    private let transport: any HTTPTransport
    private let source: ProviderSource

    /// Creates a client whose customer-token provider is found by name in `registry`, as the
    /// Exponea SDKs find theirs, and loads it when advanced auth is enabled.
    ///
    /// - Parameters:
    ///   - configuration: The checked configuration.
    ///   - policy: The endpoint table; default ``AuthorizationPolicy/engagement(advancedAuthEnabled:)``.
    ///   - registry: Where the provider is looked up by name.
    ///   - transport: How requests are sent; default ``URLSessionHTTPTransport``.
    ///   - diagnostics: Where messages go; default standard error.
    ///   - clock: The time source for token expiry, waits and deadlines.
    ///   - options: Refresh window, redirect and deadline limits.
    ///   - observer: Told of each ``AuthorizationEvent`` of the client's authorizer and of a
    ///     built-in provider it loads by name; `nil`, the default, costs nothing.
    /// - Throws: ``ConfigurationError`` when the provider cannot be loaded (with the vendors'
    ///   documented messages), when the policy sends customer tokens with advanced auth disabled,
    ///   or sends the API key without one configured.
    public init(
        configuration: AuthorizationConfiguration,
        policy: AuthorizationPolicy? = nil,
        registry: ProviderRegistry = ProviderRegistry(),
        transport: any HTTPTransport = URLSessionHTTPTransport(),
        diagnostics: any DiagnosticsSink = StandardErrorDiagnosticsSink(),
        clock: any AuthorizationClock = SystemClock(),
        options: AuthorizationOptions = AuthorizationOptions(),
        observer: (any AuthorizationEventObserver)? = nil
    ) throws(ConfigurationError) {
        let policy = policy ?? .engagement(advancedAuthEnabled: configuration.advancedAuthEnabled)
        try Self.checkEngagement(configuration, policy: policy, diagnostics: diagnostics)
        var providers = Self.projectProviders(configuration)
        var classBased = false
        if configuration.advancedAuthEnabled {
            let resolved = try Self.loadProvider(configuration, registry: registry, clock: clock, diagnostics: diagnostics, observer: observer)
            providers[.bearer] = resolved.provider
            classBased = resolved.isClassBased
        }
        self.authorizer = try Self.engagementAuthorizer(configuration, policy: policy, providers: providers,
                                                        options: options, clock: clock, diagnostics: diagnostics, observer: observer)
        self.configuration = configuration
        self.transport = transport
        self.source = configuration.advancedAuthEnabled ? .registry(registry, isClassBased: Locked(classBased)) : .none
    }

    /// Creates a client whose customer-token provider is `provider`: no registry, no name.
    ///
    /// The parameters are those of ``init(configuration:policy:registry:transport:diagnostics:clock:options:observer:)``.
    ///
    /// - Throws: ``ConfigurationError`` when advanced auth is disabled in `configuration` (the
    ///   provider would never be asked), or the policy sends the API key without one configured.
    public init(
        configuration: AuthorizationConfiguration,
        provider: any AuthorizationProvider,
        policy: AuthorizationPolicy? = nil,
        transport: any HTTPTransport = URLSessionHTTPTransport(),
        diagnostics: any DiagnosticsSink = StandardErrorDiagnosticsSink(),
        clock: any AuthorizationClock = SystemClock(),
        options: AuthorizationOptions = AuthorizationOptions(),
        observer: (any AuthorizationEventObserver)? = nil
    ) throws(ConfigurationError) {
        guard configuration.advancedAuthEnabled else {
            diagnostics.log(.error, ConfigurationError.providerWithoutAdvancedAuth.message)
            throw .providerWithoutAdvancedAuth
        }
        let policy = policy ?? .engagement(advancedAuthEnabled: true)
        try Self.checkEngagement(configuration, policy: policy, diagnostics: diagnostics)
        var providers = Self.projectProviders(configuration)
        providers[.bearer] = provider
        self.authorizer = try Self.engagementAuthorizer(configuration, policy: policy, providers: providers,
                                                        options: options, clock: clock, diagnostics: diagnostics, observer: observer)
        self.configuration = configuration
        self.transport = transport
        self.source = .fixed
    }

    /// Creates a client around any authorizer: its policy, providers, options, clock and diagnostics.
    public init(authorizer: RequestAuthorizer, transport: any HTTPTransport = URLSessionHTTPTransport()) {
        self.authorizer = authorizer
        self.configuration = nil
        self.transport = transport
        self.source = .fixed
    }

    /// The authorizer's summary; never a credential.
    public var description: String { "AuthorizedHTTPClient(\(authorizer))" }

    public var customMirror: Mirror { Mirror(self, children: ["authorizer": authorizer.description], displayStyle: .class) }

    /// The endpoint catalogue, rules and scheme table in force.
    public var policy: AuthorizationPolicy { authorizer.policy }

    /// The limits in force.
    public var options: AuthorizationOptions { authorizer.options }

    /// The customer-token (bearer) provider, or `nil` when there is none.
    ///
    /// A built-in mode's provider is reached through it, e.g. `client.provider as? IDTokenStore`.
    public var provider: (any AuthorizationProvider)? { authorizer.provider(for: .bearer) }

    /// Tells the client the user's identity changed (a new customer, `anonymize`).
    ///
    /// Every provider is told through ``AuthorizationProvider/identityDidChange()``. A provider
    /// class found by name (``AuthorizationProviderType``) is then loaded again from the registry, a
    /// new instance, as the vendor SDKs do, and swapped in only once it has loaded: requests in
    /// flight keep the provider they read, and none finds the client without one. With advanced
    /// auth disabled nothing is looked up.
    ///
    /// - Throws: ``ConfigurationError`` when the provider class can no longer be loaded; requests that
    ///   need it then fail with ``RequestError/Code/noProvider`` rather than use the old user's provider.
    public func identityDidChange() async throws(ConfigurationError) {
        switch source {
        case .none:
            return
        case .fixed:
            await authorizer.identityDidChange()
        case .registry(let registry, let isClassBased):
            await authorizer.identityDidChange()
            guard isClassBased.withLock({ $0 }), let configuration else { return }
            do {
                let reloaded = try Self.loadProvider(configuration, registry: registry, clock: authorizer.clock,
                                                     diagnostics: authorizer.diagnostics, observer: authorizer.observer)
                authorizer.setProvider(reloaded.provider, for: .bearer)
                isClassBased.withLock { $0 = reloaded.isClassBased }
            } catch {
                authorizer.removeProvider(for: .bearer)
                throw error
            }
        }
    }

    // MARK: Sending

    /// Sends a request to a catalogue endpoint with the credential its scheme names.
    ///
    /// A 401 or 403 to a request that carried a credential is reported to the provider that issued
    /// it, which may ask for one retry with a new credential; a request is never retried twice.
    ///
    /// - Parameters:
    ///   - endpoint: The endpoint's name in the policy.
    ///   - parameters: Values for the endpoint's `<name>` path parameters (`projectToken` comes
    ///     from the configuration).
    ///   - query: Query items added after the template's own.
    ///   - body: The body, sent with `Content-Type: application/json` unless `headers` says otherwise.
    ///   - headers: Extra header fields. An `Authorization` field here is replaced by the policy's; a
    ///     name that is not an HTTP token or a value with a character a header cannot hold fails
    ///     the request with ``RequestError/Code/invalidHeader``.
    /// - Returns: The 2xx response.
    /// - Throws: ``RequestError``.
    public func send(
        _ endpoint: EndpointID,
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
    private func send(_ request: OutgoingRequest, endpoint: EndpointID?) async throws(RequestError) -> ServerResponse {
        let response = try await authorizer.send(request, endpoint: endpoint, within: transport)
        guard (200..<300).contains(response.statusCode) else {
            throw .httpError(response: response, endpoint: endpoint ?? authorizer.scheme(for: request).endpoint)
        }
        return response
    }

    // MARK: Loading

    /// The API-key provider of a configuration, when it has a project authorization.
    private static func projectProviders(_ configuration: AuthorizationConfiguration) -> [AuthorizationScheme: any AuthorizationProvider] {
        guard let authorization = configuration.authorization else { return [:] }
        return [.apiKey: ProjectAuthorizationProvider(authorization)]
    }

    private static func checkEngagement(_ configuration: AuthorizationConfiguration, policy: AuthorizationPolicy, diagnostics: any DiagnosticsSink) throws(ConfigurationError) {
        let bearerEndpoints = policy.endpoints(using: .bearer)
        if !configuration.advancedAuthEnabled, !bearerEndpoints.isEmpty {
            throw logged(.customerTokenEndpointsWithoutAdvancedAuth(bearerEndpoints.map(\.rawValue)), diagnostics)
        }
        if configuration.authorization == nil, policy.schemesInUse.contains(.apiKey) {
            throw logged(.missingKey("authorization"), diagnostics)
        }
    }

    private static func loadProvider(
        _ configuration: AuthorizationConfiguration, registry: ProviderRegistry,
        clock: any AuthorizationClock, diagnostics: any DiagnosticsSink, observer: (any AuthorizationEventObserver)?
    ) throws(ConfigurationError) -> ResolvedProvider {
        let context = ProviderFactoryContext(configuration: configuration, clock: clock, diagnostics: diagnostics, observer: observer)
        do {
            return try registry.resolveProvider(for: context)
        } catch {
            throw logged(error, diagnostics)
        }
    }

    private static func logged(_ error: ConfigurationError, _ diagnostics: any DiagnosticsSink) -> ConfigurationError {
        diagnostics.log(.error, error.message)
        return error
    }

    /// The authorizer of an Engagement configuration: its base URL and project token, the policy,
    /// the providers. A refusal is logged at error level.
    private static func engagementAuthorizer(
        _ configuration: AuthorizationConfiguration, policy: AuthorizationPolicy, providers: [AuthorizationScheme: any AuthorizationProvider],
        options: AuthorizationOptions, clock: any AuthorizationClock, diagnostics: any DiagnosticsSink,
        observer: (any AuthorizationEventObserver)?
    ) throws(ConfigurationError) -> RequestAuthorizer {
        do {
            return try RequestAuthorizer(
                policy: policy, providers: providers, baseURL: configuration.baseURL,
                pathParameters: ["projectToken": configuration.projectToken],
                options: options, clock: clock, diagnostics: diagnostics, observer: observer
            )
        } catch {
            throw logged(error, diagnostics)
        }
    }
}

/// The configured project authorization (`Token <key>` or `Bearer <jwt>`), for the API-key scheme.
struct ProjectAuthorizationProvider: AuthorizationProvider {
    let credential: Credential

    init(_ authorization: ProjectAuthorization) {
        switch authorization.scheme {
        case .token: credential = .apiKey(authorization.credential)
        case .bearer: credential = .bearer(authorization.credential)
        }
    }

    func credential(for context: AuthorizationContext) async throws -> Credential { credential }

    var endsByDeadline: Bool { true }
}
