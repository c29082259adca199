import Foundation

/// The one HTTP client an SDK sends its calls through: it looks up each endpoint's scheme in the
/// policy, gets the credential, attaches the `Authorization` header, sends, follows redirects
/// safely and classifies the response.
///
/// ```swift
/// let registry = ProviderRegistry()
/// registry.register(ExampleAuthProvider.self, as: "ExponeaAuthProvider")
/// let client = try AuthorizedHTTPClient(
///     configuration: AuthorizationConfiguration(
///         projectToken: "my-project",
///         baseURL: "https://api.exponea.com",
///         authorization: "Token my-api-key",
///         advancedAuthEnabled: true
///     ),
///     registry: registry
/// )
/// let response = try await client.send(.appInboxFetch, body: Data(#"{"customer_ids":{"registered":"u1"}}"#.utf8))
/// ```
///
/// Configuration is checked when the client is created: a bad provider setup throws a
/// ``ConfigurationError`` (also logged at error level), and the client does not exist.
public final class AuthorizedHTTPClient: Sendable {
    /// How many redirects one request follows.
    public static let redirectLimit = 5

    /// The configuration in force.
    public let configuration: AuthorizationConfiguration
    /// The endpoint catalogue and scheme table in force.
    public let policy: AuthorizationPolicy

    private let registry: ProviderRegistry
    private let transport: any HTTPTransport
    private let diagnostics: any DiagnosticsSink
    private let clock: any AuthorizationClock
    private let loadedProvider = Locked<ResolvedProvider?>(nil)
    /// Each endpoint's method, scheme and URL, resolved once: the base URL and project token are fixed
    /// for a client, so the per-request path only looks them up. A nil URL fails with ``RequestError/invalidURL(endpoint:)``.
    private let routes: [EndpointID: (method: String, scheme: AuthorizationScheme, url: URL?)]
    /// The `Authorization` value for API-key endpoints, built once.
    private let projectAuthorizationHeader: String?

    /// Creates a client and, when advanced auth is enabled, loads its provider.
    ///
    /// - Parameters:
    ///   - configuration: The checked configuration.
    ///   - policy: The endpoint table; default ``AuthorizationPolicy/engagement(advancedAuthEnabled:)``.
    ///   - registry: Where the provider is looked up by name.
    ///   - transport: How requests are sent; default ``URLSessionTransport``.
    ///   - diagnostics: Where messages go; default standard error.
    ///   - clock: The time source for token expiry and waits.
    /// - Throws: ``ConfigurationError`` when the provider cannot be loaded, when the policy sends
    ///   customer tokens with advanced auth disabled, or sends the API key without one configured.
    public init(
        configuration: AuthorizationConfiguration,
        policy: AuthorizationPolicy? = nil,
        registry: ProviderRegistry = ProviderRegistry(),
        transport: any HTTPTransport = URLSessionTransport(),
        diagnostics: any DiagnosticsSink = StandardErrorDiagnosticsSink(),
        clock: any AuthorizationClock = SystemClock()
    ) throws(ConfigurationError) {
        self.configuration = configuration
        self.policy = policy ?? .engagement(advancedAuthEnabled: configuration.advancedAuthEnabled)
        self.registry = registry
        self.transport = transport
        self.diagnostics = diagnostics
        self.clock = clock
        var routes: [EndpointID: (method: String, scheme: AuthorizationScheme, url: URL?)] = [:]
        for endpoint in self.policy.endpoints {
            guard let scheme = self.policy.scheme(for: endpoint.id) else { continue }
            routes[endpoint.id] = (endpoint.method, scheme, endpoint.url(baseURL: configuration.baseURL, projectToken: configuration.projectToken))
        }
        self.routes = routes
        self.projectAuthorizationHeader = configuration.authorization?.headerValue

        let bearerEndpoints = self.policy.endpoints(using: .bearer)
        if !configuration.advancedAuthEnabled, !bearerEndpoints.isEmpty {
            throw logged(.customerTokenEndpointsWithoutAdvancedAuth(bearerEndpoints.map(\.rawValue)))
        }
        let apiKeyEndpoints = self.policy.endpoints(using: .apiKey)
        if configuration.authorization == nil, !apiKeyEndpoints.isEmpty {
            throw logged(.missingKey("authorization"))
        }
        if configuration.advancedAuthEnabled {
            let provider = try loadProvider()
            loadedProvider.withLock { $0 = provider }
        }
    }

    /// The loaded provider, or `nil` when advanced auth is disabled.
    ///
    /// A built-in mode's provider is reached through it, e.g. `client.provider as? IDTokenStore`.
    public var provider: (any AuthorizationProvider)? { loadedProvider.withLock { $0?.provider } }

    /// Tells the client the user's identity changed (a new customer, `anonymize`).
    ///
    /// The provider is told through ``AuthorizationProvider/identityDidChange()``. A provider class
    /// found by name (``AuthorizationProviderType``) is then loaded again from the registry, a new
    /// instance, as the vendor SDKs do; a native provider is kept. With advanced auth disabled
    /// nothing is looked up.
    ///
    /// - Throws: ``ConfigurationError`` when the provider class can no longer be loaded; requests that
    ///   need it then fail with ``RequestError/noProvider(endpoint:)``.
    public func identityDidChange() async throws(ConfigurationError) {
        guard configuration.advancedAuthEnabled else { return }
        if let current = loadedProvider.withLock({ $0 }) {
            await current.provider.identityDidChange()
            guard current.isClassBased else { return }
        }
        loadedProvider.withLock { $0 = nil }
        let reloaded = try loadProvider()
        loadedProvider.withLock { $0 = reloaded }
    }

    /// Sends a request to `endpoint` with the credential its scheme names.
    ///
    /// A 401 or 403 to a bearer request is reported to the provider, which may ask for one retry
    /// with a new credential; a request is never retried twice.
    ///
    /// - Parameters:
    ///   - endpoint: The endpoint's name in the policy.
    ///   - body: The body, sent with `Content-Type: application/json` unless `headers` says otherwise.
    ///   - headers: Extra header fields. An `Authorization` field here is replaced by the policy's; a
    ///     name that is not an HTTP token or a value with a control character fails the request with
    ///     ``RequestError/invalidHeader(name:)``.
    /// - Returns: The 2xx response.
    /// - Throws: ``RequestError``.
    public func send(_ endpoint: EndpointID, body: Data? = nil, headers: [String: String] = [:]) async throws(RequestError) -> HTTPResponse {
        guard let route = routes[endpoint] else { throw .unknownEndpoint(endpoint) }
        guard let url = route.url else { throw .invalidURL(endpoint: endpoint) }
        let scheme = route.scheme
        for (name, value) in headers where !HeaderCredential.isValidHeader(name: name, value: value) {
            throw .invalidHeader(name: name)
        }
        var request = HTTPRequest(method: route.method, url: url, headers: headers, body: body)
        request.removeHeader("Authorization")
        if body != nil, request.value(forHeader: "Content-Type") == nil {
            request.headers["Content-Type"] = "application/json"
        }

        var attempt = 1
        while true {
            let context = AuthorizationContext(endpoint: endpoint, url: url, attempt: attempt)
            var authorized = request
            let sentToken = try await authorize(&authorized, scheme: scheme, context: context)
            let response = try await sendFollowingRedirects(authorized)
            switch response.statusCode {
            case 200..<300:
                return response
            case 401, 403:
                diagnostics.log(.warning, "\(endpoint) was rejected with HTTP \(response.statusCode) (\(scheme.rawValue) credential \(sentToken.map(Redaction.redact) ?? "none"))")
                if let sentToken, let provider = provider {
                    let decision = await provider.credentialRejected(sentToken, status: response.statusCode, for: context)
                    if decision == .retry, attempt == 1 {
                        attempt += 1
                        continue
                    }
                }
                throw .authorizationRejected(status: response.statusCode, scheme: scheme, body: response.body)
            default:
                throw .httpError(status: response.statusCode, body: response.body)
            }
        }
    }

    /// Adds the `Authorization` header for `scheme`; returns the bearer token it attached, if any.
    private func authorize(_ request: inout HTTPRequest, scheme: AuthorizationScheme, context: AuthorizationContext) async throws(RequestError) -> String? {
        switch scheme {
        case .none:
            return nil
        case .apiKey:
            guard let projectAuthorizationHeader else {
                throw .missingProjectAuthorization(endpoint: context.endpoint)
            }
            request.headers["Authorization"] = projectAuthorizationHeader
            return nil
        case .bearer:
            guard let provider else { throw .noProvider(endpoint: context.endpoint) }
            let credential: Credential
            do {
                credential = try await provider.credential(for: context)
            } catch let error as RequestError {
                diagnostics.log(.error, error.description)
                throw error
            } catch is CancellationError {
                throw .cancelled
            } catch {
                diagnostics.log(.error, "The authorization provider failed for \(context.endpoint): \(error)")
                throw .providerFailed(String(describing: error))
            }
            switch credential {
            case .omitted:
                diagnostics.log(.debug, "\(context.endpoint) sent without a credential, as the provider asked")
                return nil
            case .token(let token):
                switch HeaderCredential.check(token) {
                case .valid: break
                case .empty: throw .missingCustomerToken(endpoint: context.endpoint)
                case .controlCharacters:
                    diagnostics.log(.error, RequestError.invalidCredential(endpoint: context.endpoint).description)
                    throw .invalidCredential(endpoint: context.endpoint)
                }
                request.headers["Authorization"] = "Bearer \(token)"
                return token
            }
        }
    }

    private func sendFollowingRedirects(_ original: HTTPRequest) async throws(RequestError) -> HTTPResponse {
        var request = original
        for _ in 0...Self.redirectLimit {
            let response: HTTPResponse
            do {
                response = try await transport.send(request)
            } catch {
                if Task.isCancelled { throw .cancelled }
                throw .transportFailed(String(describing: error))
            }
            guard [301, 302, 303, 307, 308].contains(response.statusCode),
                  let location = response.value(forHeader: "Location"),
                  let next = URL(string: location, relativeTo: request.url)?.absoluteURL
            else { return response }
            if !Self.sameOrigin(next, original.url), request.value(forHeader: "Authorization") != nil {
                request.removeHeader("Authorization")
                diagnostics.log(.info, "Redirect to another host (\(next.host ?? "?")): Authorization header removed")
            }
            if response.statusCode == 303 || (request.method == "POST" && [301, 302].contains(response.statusCode)) {
                request.method = "GET"
                request.body = nil
                request.removeHeader("Content-Type")
            }
            request.url = next
        }
        throw .tooManyRedirects(limit: Self.redirectLimit)
    }

    static func sameOrigin(_ lhs: URL, _ rhs: URL) -> Bool {
        lhs.scheme?.lowercased() == rhs.scheme?.lowercased()
            && lhs.host?.lowercased() == rhs.host?.lowercased()
            && effectivePort(lhs) == effectivePort(rhs)
    }

    private static func effectivePort(_ url: URL) -> Int? {
        url.port ?? (url.scheme?.lowercased() == "https" ? 443 : url.scheme?.lowercased() == "http" ? 80 : nil)
    }

    private func loadProvider() throws(ConfigurationError) -> ResolvedProvider {
        let context = ProviderFactoryContext(configuration: configuration, clock: clock, diagnostics: diagnostics)
        do {
            return try registry.resolveProvider(for: context)
        } catch {
            throw logged(error)
        }
    }

    private func logged(_ error: ConfigurationError) -> ConfigurationError {
        diagnostics.log(.error, error.message)
        return error
    }
}
