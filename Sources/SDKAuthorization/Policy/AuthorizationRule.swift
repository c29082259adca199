import Foundation

/// A rule that gives requests the policy's catalogue does not name a scheme, by host, path and method.
///
/// ```swift
/// var policy = AuthorizationPolicy()
/// try policy.add(AuthorizationRule(host: "api.example.com", path: "/v2/users/*/inbox", method: "GET", scheme: .bearer))
/// try policy.add(AuthorizationRule(host: "*.example.com", path: "/public/**", scheme: .none))
/// ```
///
/// - `host`: an exact host or one leading `*.` label, as ``AuthorizedDomain``. A rule always names
///   its host, so a credential never goes to a host the SDK author did not name. Ports are not
///   compared. A request whose host is not a host name or address (it holds `%`, `@`, `/`, NUL...)
///   matches no rule.
/// - `path`: `/`-separated segments; `*` or `<name>` matches one segment, a final `**` matches any
///   rest (none included). Segments compare exactly, after percent-decoding; the query is ignored.
/// - `method`: `nil` matches every method.
public struct AuthorizationRule: Sendable, Hashable, CustomStringConvertible {
    /// The host pattern.
    public let host: AuthorizedDomain
    /// The path pattern.
    public let path: String
    /// The method, upper-cased, or `nil` for every method.
    public let method: String?
    /// The scheme of the requests it matches.
    public let scheme: AuthorizationScheme

    let pathPattern: PathPattern

    /// Creates a rule.
    ///
    /// - Throws: ``ConfigurationError/invalidValue(key:reason:)`` for a bad host pattern, a path
    ///   that does not start with `/` or holds `**` anywhere but at its end, or a method that is
    ///   not an HTTP token.
    public init(host: String, path: String = "/**", method: String? = nil, scheme: AuthorizationScheme) throws(ConfigurationError) {
        self.host = try AuthorizedDomain(host, key: "rule host")
        guard let pattern = PathPattern(path) else {
            throw .invalidValue(key: "rule path", reason: "'\(path.prefix(200))' must start with '/' and may hold '**' only as its last segment")
        }
        if let method {
            guard HeaderFieldRules.isValidName(method) else {
                throw .invalidValue(key: "rule method", reason: "'\(method.prefix(40))' is not an HTTP method")
            }
        }
        self.path = path
        self.pathPattern = pattern
        self.method = method?.uppercased()
        self.scheme = scheme
    }

    /// Whether the rule applies to `request`.
    public func matches(_ request: OutgoingRequest) -> Bool {
        if let method, method != request.method.uppercased() { return false }
        guard host.matches(request.url) else { return false }
        return pathPattern.matches(request.url.percentEncodedPathForMatching)
    }

    public var description: String {
        "\(method ?? "*") \(host)\(path) -> \(scheme)"
    }
}

/// A path pattern: literal segments, one-segment wildcards (`*`, `<name>`) and an optional final `**`.
struct PathPattern: Sendable, Hashable {
    enum Segment: Sendable, Hashable { case literal(String), any }
    let segments: [Segment]
    let matchesRest: Bool

    init?(_ pattern: String) {
        guard pattern.hasPrefix("/") else { return nil }
        var parts = pattern.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        var rest = false
        if parts.last == "**" {
            rest = true
            parts.removeLast()
        }
        if parts.last == "" { parts.removeLast() }
        var segments: [Segment] = []
        for part in parts {
            if part == "**" { return nil }
            if part == "*" || (part.hasPrefix("<") && part.hasSuffix(">") && part.count > 2) {
                segments.append(.any)
            } else {
                segments.append(.literal(part.removingPercentEncoding ?? part))
            }
        }
        self.segments = segments
        self.matchesRest = rest
    }

    func matches(_ path: String) -> Bool {
        var parts = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        if parts.last == "" { parts.removeLast() }
        guard matchesRest ? parts.count >= segments.count : parts.count == segments.count else { return false }
        for (segment, part) in zip(segments, parts) {
            switch segment {
            case .any:
                if part.isEmpty { return false }
            case .literal(let literal):
                if literal != (part.removingPercentEncoding ?? String(part)) { return false }
            }
        }
        return true
    }
}

extension URL {
    /// The path as it appears in the URL, percent-encoding kept.
    var percentEncodedPathForMatching: String {
        URLComponents(url: self, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? path
    }
}

/// Scheme, host and port: two URLs with the same origin may share credentials.
struct Origin: Hashable, Sendable {
    let scheme: String
    let host: String
    let port: Int?

    init?(_ url: URL) {
        // A URL whose host is no host name or address has no origin: it matches no catalogue endpoint.
        guard let scheme = url.scheme?.lowercased(), let host = HostName.host(of: url) else { return nil }
        self.scheme = scheme
        self.host = host
        self.port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : nil)
    }

    static func same(_ lhs: URL, _ rhs: URL) -> Bool {
        guard let left = Origin(lhs), let right = Origin(rhs) else { return false }
        return left == right
    }
}
