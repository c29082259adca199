/// Which credential an endpoint's requests carry.
public enum AuthorizationScheme: String, Sendable, Hashable, CaseIterable {
    /// The configured project authorization, normally `Authorization: Token <apiKey>`.
    case apiKey
    /// A token from the authorization provider: `Authorization: Bearer <jwt>`.
    case bearer
    /// No `Authorization` header.
    case none
}

/// The endpoint catalogue and its per-endpoint scheme table.
///
/// The table is data: an SDK author adds endpoints and moves one to another scheme.
///
/// ```swift
/// var policy = AuthorizationPolicy.engagement(advancedAuthEnabled: true)
/// try policy.add(Endpoint("contentBlocks", path: "/webxp/s/<projectToken>/inappcontentblocks"), scheme: .bearer)
/// try policy.setScheme(.bearer, for: .customerAttributes)
/// ```
public struct AuthorizationPolicy: Sendable, Equatable {
    private struct Entry: Sendable, Equatable {
        var endpoint: Endpoint
        var scheme: AuthorizationScheme
    }

    private var entries: [EndpointID: Entry] = [:]
    private var order: [EndpointID] = []

    /// An empty policy.
    public init() {}

    /// The nine Bloomreach Engagement endpoints with their default schemes: API key everywhere,
    /// except the two app-inbox endpoints, which carry the customer token when `advancedAuthEnabled`.
    public static func engagement(advancedAuthEnabled: Bool) -> AuthorizationPolicy {
        var policy = AuthorizationPolicy()
        let inbox: AuthorizationScheme = advancedAuthEnabled ? .bearer : .apiKey
        let table: [(EndpointID, String, AuthorizationScheme)] = [
            (.trackCustomers, "/track/v2/projects/<projectToken>/customers", .apiKey),
            (.trackEvents, "/track/v2/projects/<projectToken>/customers/events", .apiKey),
            (.trackCampaignClicks, "/track/v2/projects/<projectToken>/campaigns/clicks", .apiKey),
            (.customerAttributes, "/data/v2/projects/<projectToken>/customers/attributes", .apiKey),
            (.consentCategories, "/data/v2/projects/<projectToken>/consent/categories", .apiKey),
            (.inAppMessages, "/webxp/s/<projectToken>/inappmessages?v=1", .apiKey),
            (.appInboxFetch, "/webxp/projects/<projectToken>/appinbox/fetch", inbox),
            (.appInboxMarkAsRead, "/webxp/projects/<projectToken>/appinbox/markasread", inbox),
            (.selfCheckNotification, "/campaigns/send-self-check-notification?project_id=<projectToken>", .apiKey),
        ]
        for (id, path, scheme) in table {
            policy.entries[id] = Entry(endpoint: Endpoint(id, path: path), scheme: scheme)
            policy.order.append(id)
        }
        return policy
    }

    /// Every endpoint, in the order added.
    public var endpoints: [Endpoint] { order.compactMap { entries[$0]?.endpoint } }

    /// Adds an endpoint with its scheme.
    ///
    /// - Throws: ``ConfigurationError/duplicateEndpoint(_:)`` when the name is taken, and
    ///   ``ConfigurationError/invalidValue(key:reason:)`` when the path template is neither a path
    ///   starting with `/` nor an absolute `http`/`https` URL, or the method is not an HTTP token.
    public mutating func add(_ endpoint: Endpoint, scheme: AuthorizationScheme) throws(ConfigurationError) {
        guard entries[endpoint.id] == nil else { throw .duplicateEndpoint(endpoint.id.rawValue) }
        if let problem = endpoint.templateProblem {
            throw .invalidValue(key: "endpoint \(endpoint.id)", reason: problem)
        }
        guard !endpoint.method.isEmpty, endpoint.method.allSatisfy({ HeaderCredential.tokenCharacters.contains($0) }) else {
            throw .invalidValue(key: "endpoint \(endpoint.id)", reason: "'\(endpoint.method)' is not an HTTP method")
        }
        entries[endpoint.id] = Entry(endpoint: endpoint, scheme: scheme)
        order.append(endpoint.id)
    }

    /// Moves an endpoint to another scheme.
    ///
    /// - Throws: ``ConfigurationError/unknownEndpoint(_:)`` when the policy has no such endpoint.
    public mutating func setScheme(_ scheme: AuthorizationScheme, for id: EndpointID) throws(ConfigurationError) {
        guard entries[id] != nil else { throw .unknownEndpoint(id.rawValue) }
        entries[id]?.scheme = scheme
    }

    /// The endpoint named `id`.
    public func endpoint(_ id: EndpointID) -> Endpoint? { entries[id]?.endpoint }

    /// The scheme of the endpoint named `id`.
    public func scheme(for id: EndpointID) -> AuthorizationScheme? { entries[id]?.scheme }

    /// The names of the endpoints that use `scheme`, in the order added.
    public func endpoints(using scheme: AuthorizationScheme) -> [EndpointID] {
        order.filter { entries[$0]?.scheme == scheme }
    }
}
