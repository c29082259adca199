import Foundation
import SDKAuthorization
import SDKAuthorizationModeKit

extension AuthorizedHTTPClient {
    /// Creates a client whose customer-token provider is found by name in `registry`, as the
    /// Exponea SDKs find theirs, and loads it when advanced auth is enabled.
    ///
    /// - Parameters:
    ///   - configuration: The checked configuration.
    ///   - policy: The endpoint table; default ``AuthorizationPolicy/engagement(advancedAuthEnabled:)``.
    ///   - registry: Where the provider is looked up by name.
    ///   - transport: How requests are sent; default `URLSessionHTTPTransport`.
    ///   - diagnostics: Where messages go; default standard error.
    ///   - clock: The time source for token expiry, waits and deadlines.
    ///   - options: Refresh window, redirect and deadline limits.
    ///   - observer: Told of each `AuthorizationEvent` of the client's authorizer and of a
    ///     built-in provider it loads by name; `nil`, the default, costs nothing.
    /// - Throws: `ConfigurationError` when `registry` refused a registration
    ///   (`ConfigurationError.Code.invalidRegistration`), when the provider cannot be loaded (with the vendors'
    ///   documented messages), when the policy sends customer tokens with advanced auth disabled,
    ///   or sends the API key without one configured.
    public convenience init(
        configuration: AuthorizationConfiguration,
        policy: AuthorizationPolicy? = nil,
        registry: ProviderRegistry = ProviderRegistry(),
        transport: any HTTPTransport = URLSessionHTTPTransport(),
        diagnostics: any DiagnosticsSink = StandardErrorDiagnosticsSink.inDebugBuilds,
        clock: any AuthorizationClock = SystemClock(),
        options: AuthorizationOptions = AuthorizationOptions(),
        observer: (any AuthorizationEventObserver)? = nil
    ) throws(ConfigurationError) {
        let policy = policy ?? .engagement(advancedAuthEnabled: configuration.advancedAuthEnabled)
        // A registration the registry refused (a name registered twice, a mode's key refused) fails
        // every start, advanced auth on or off: it is never lost without a word.
        try registry.checkEngagementRegistrations()
        try Self.checkEngagement(configuration, policy: policy)
        var providers = Self.projectProviders(configuration)
        var classBased = false
        if configuration.advancedAuthEnabled {
            let resolved = try Self.loadProvider(configuration, registry: registry, transport: transport, clock: clock, diagnostics: diagnostics,
                                                 observer: observer)
            providers[.bearer] = resolved.provider
            classBased = resolved.isClassBased
        }
        let authorizer = try Self.engagementAuthorizer(configuration, policy: policy, providers: providers,
                                                       options: options, clock: clock, diagnostics: diagnostics, observer: observer)
        // With advanced auth disabled nothing is loaded, ever, and no provider is told.
        var identityChange: @Sendable (String?) async throws(ConfigurationError) -> Void = { _ in }
        if configuration.advancedAuthEnabled {
            identityChange = Self.reloadingFromRegistry(registry, isClassBased: Locked(classBased), configuration: configuration,
                                                        authorizer: authorizer, transport: transport, clock: clock, diagnostics: diagnostics,
                                                        observer: observer)
        }
        self.init(authorizer: authorizer, transport: transport, identityChange: identityChange)
    }

    /// Creates a client whose customer-token provider is `provider`: no registry, no name.
    ///
    /// The parameters are those of ``init(configuration:policy:registry:transport:diagnostics:clock:options:observer:)``.
    ///
    /// - Throws: `ConfigurationError` when advanced auth is disabled in `configuration` (the
    ///   provider would never be asked), or the policy sends the API key without one configured.
    public convenience init(
        configuration: AuthorizationConfiguration,
        provider: any AuthorizationProvider,
        policy: AuthorizationPolicy? = nil,
        transport: any HTTPTransport = URLSessionHTTPTransport(),
        diagnostics: any DiagnosticsSink = StandardErrorDiagnosticsSink.inDebugBuilds,
        clock: any AuthorizationClock = SystemClock(),
        options: AuthorizationOptions = AuthorizationOptions(),
        observer: (any AuthorizationEventObserver)? = nil
    ) throws(ConfigurationError) {
        guard configuration.advancedAuthEnabled else { throw .providerWithoutAdvancedAuth }
        let policy = policy ?? .engagement(advancedAuthEnabled: true)
        try Self.checkEngagement(configuration, policy: policy)
        var providers = Self.projectProviders(configuration)
        providers[.bearer] = provider
        let authorizer = try Self.engagementAuthorizer(configuration, policy: policy, providers: providers,
                                                       options: options, clock: clock, diagnostics: diagnostics, observer: observer)
        // Given directly: providers are told of an identity change, never re-created.
        self.init(authorizer: authorizer, transport: transport, identityChange: nil)
    }

    // MARK: Loading

    /// What an identity change does to a client whose provider was looked up by name: every
    /// provider is told, then a provider class is loaded again and swapped in, or removed when it
    /// can no longer be loaded.
    private static func reloadingFromRegistry(
        _ registry: ProviderRegistry, isClassBased: Locked<Bool>, configuration: AuthorizationConfiguration, authorizer: RequestAuthorizer,
        transport: any HTTPTransport, clock: any AuthorizationClock, diagnostics: any DiagnosticsSink, observer: (any AuthorizationEventObserver)?
    ) -> @Sendable (String?) async throws(ConfigurationError) -> Void {
        { (identity: String?) async throws(ConfigurationError) in
            await authorizer.identityDidChange(to: identity)
            guard isClassBased.withLock({ $0 }) else { return }
            do throws(ConfigurationError) {
                let reloaded = try loadProvider(configuration, registry: registry, transport: transport, clock: clock, diagnostics: diagnostics,
                                                observer: observer)
                authorizer.setProvider(reloaded.provider, for: .bearer)
                isClassBased.withLock { $0 = reloaded.isClassBased }
            } catch {
                authorizer.removeProvider(for: .bearer)
                throw error
            }
        }
    }

    /// The API-key provider of a configuration, when it has a project authorization.
    private static func projectProviders(_ configuration: AuthorizationConfiguration) -> [AuthorizationScheme: any AuthorizationProvider] {
        guard let authorization = configuration.authorization else { return [:] }
        return [.apiKey: ProjectAuthorizationProvider(authorization)]
    }

    /// A start-up error is thrown, not also logged: an app that prints its error shows it once.
    private static func checkEngagement(_ configuration: AuthorizationConfiguration, policy: AuthorizationPolicy) throws(ConfigurationError) {
        let bearerEndpoints = policy.endpoints(using: .bearer)
        if !configuration.advancedAuthEnabled, !bearerEndpoints.isEmpty {
            throw .customerTokenEndpointsWithoutAdvancedAuth(bearerEndpoints.map(\.rawValue))
        }
        // No provider is made without advanced auth: a mode's settings would be ignored.
        if !configuration.advancedAuthEnabled, let key = configuration.modeSettings.values.keys.min() {
            let mode: String? = switch configuration.providerLookup {
            case .implicitName(let name): name
            case .registeredClassName(let name): name
            }
            throw ConfigurationError.keyIgnoredWithoutAdvancedAuth(key, mode: mode).placed(in: configuration.sourceFile)
        }
        if configuration.authorization == nil, policy.schemesInUse.contains(.apiKey) {
            throw ConfigurationError.missingKey("authorization").placed(in: configuration.sourceFile)
        }
    }

    private static func loadProvider(
        _ configuration: AuthorizationConfiguration, registry: ProviderRegistry, transport: any HTTPTransport,
        clock: any AuthorizationClock, diagnostics: any DiagnosticsSink, observer: (any AuthorizationEventObserver)?
    ) throws(ConfigurationError) -> ResolvedProvider {
        let context = ProviderFactoryContext(baseURL: configuration.baseURL, configuration: configuration, clock: clock, diagnostics: diagnostics,
                                             observer: observer, modeSettings: configuration.modeSettings, transport: transport)
        do {
            return try registry.resolveProvider(for: configuration, context: context)
        } catch {
            // The file the configuration came from: in the message of a missing key, in `path` only
            // for the messages the Exponea SDKs document.
            let documented = ConfigurationError.documentedLookupCodes.contains(error.code)
            let placed = documented || error.code == .missingKey ? error.placed(in: configuration.sourceFile) : error
            // SPEC.md ("Provider lookup by name"): the vendors' documented lookup messages are logged
            // at error level as well as carried by the error, as the vendor SDKs do. Every other
            // start-up error is only thrown.
            if documented { diagnostics.log(.error, placed.message) }
            throw placed
        }
    }

    /// The authorizer of an Engagement configuration: its base URL and project token, the policy,
    /// the providers. A refusal is thrown, not logged.
    private static func engagementAuthorizer(
        _ configuration: AuthorizationConfiguration, policy: AuthorizationPolicy, providers: [AuthorizationScheme: any AuthorizationProvider],
        options: AuthorizationOptions, clock: any AuthorizationClock, diagnostics: any DiagnosticsSink,
        observer: (any AuthorizationEventObserver)?
    ) throws(ConfigurationError) -> RequestAuthorizer {
        try RequestAuthorizer(
            policy: policy, providers: providers, baseURL: configuration.baseURL,
            pathParameters: ["projectToken": configuration.projectToken],
            options: options, clock: clock, diagnostics: diagnostics, observer: observer
        )
    }
}

/// The configured project authorization (`Token <key>` or `Bearer <jwt>`), for the API-key scheme.
struct ProjectAuthorizationProvider: AuthorizationProvider {
    let credential: Credential

    init(_ authorization: ProjectAuthorization) {
        switch authorization.scheme {
        case .token: credential = .authorization(scheme: ProjectAuthorization.Scheme.token.rawValue, authorization.credential)
        case .bearer: credential = .bearer(authorization.credential)
        }
    }

    func credential(for context: AuthorizationContext) async throws -> Credential { credential }

    var endsByDeadline: Bool { true }
}
