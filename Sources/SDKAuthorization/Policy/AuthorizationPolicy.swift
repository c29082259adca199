internal import SDKAuthorizationPrimitives

/// Which requests carry which credential: an endpoint catalogue with a scheme per endpoint, and
/// rules for any other request.
///
/// ```swift
/// var policy = AuthorizationPolicy(rules: [try AuthorizationRule(host: "api.example.com", scheme: .bearer)])
/// try policy.add(Endpoint("userInbox", method: "GET", path: "https://api.example.com/v2/users/<userId>/inbox"), scheme: .bearer)
/// try policy.add(AuthorizationRule(host: "media.example.com", path: "/private/**", method: "GET", scheme: .bearer))
/// try policy.setScheme(.apiKey, for: "userInbox")
/// ```
///
/// A request made from the catalogue (``AuthorizedHTTPClient/send(_:parameters:query:body:headers:)``)
/// has its endpoint's scheme. Any other request gets the scheme of the catalogue endpoint whose
/// method, origin and path it has, else of the first rule that matches it; a request nothing
/// matches gets no credential.
public struct AuthorizationPolicy: Sendable, Equatable {
    private struct Entry: Sendable, Equatable {
        var endpoint: Endpoint
        var scheme: AuthorizationScheme
    }

    private var entries: [Endpoint.ID: Entry] = [:]
    private var order: [Endpoint.ID] = []
    /// The rules, in the order added; the first that matches wins.
    public private(set) var rules: [AuthorizationRule] = []

    /// An empty policy.
    public init() {}

    /// A policy of rules alone, tried in order; the first that matches a request gives its scheme.
    public init(rules: [AuthorizationRule]) {
        self.rules = rules
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
        guard HeaderFieldRules.isValidName(endpoint.method) else {
            throw .invalidValue(key: "endpoint \(endpoint.id)", reason: "'\(endpoint.method)' is not an HTTP method")
        }
        entries[endpoint.id] = Entry(endpoint: endpoint, scheme: scheme)
        order.append(endpoint.id)
    }

    /// Adds a rule for requests the catalogue does not name; rules are tried in the order added.
    public mutating func add(_ rule: AuthorizationRule) {
        rules.append(rule)
    }

    /// Moves an endpoint to another scheme.
    ///
    /// - Throws: ``ConfigurationError/unknownEndpoint(_:)`` when the policy has no such endpoint.
    public mutating func setScheme(_ scheme: AuthorizationScheme, for id: Endpoint.ID) throws(ConfigurationError) {
        guard entries[id] != nil else { throw .unknownEndpoint(id.rawValue) }
        entries[id]?.scheme = scheme
    }

    /// The endpoint named `id`.
    public func endpoint(_ id: Endpoint.ID) -> Endpoint? { entries[id]?.endpoint }

    /// The scheme of the endpoint named `id`.
    public func scheme(for id: Endpoint.ID) -> AuthorizationScheme? { entries[id]?.scheme }

    /// The names of the endpoints that use `scheme`, in the order added.
    public func endpoints(using scheme: AuthorizationScheme) -> [Endpoint.ID] {
        order.filter { entries[$0]?.scheme == scheme }
    }

    /// Every scheme an endpoint or a rule names, ``AuthorizationScheme/none`` left out.
    public var schemesInUse: Set<AuthorizationScheme> {
        Set(entries.values.map(\.scheme) + rules.map(\.scheme)).subtracting([.none])
    }
}
