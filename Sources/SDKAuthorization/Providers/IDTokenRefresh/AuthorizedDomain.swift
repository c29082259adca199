/// A host pattern that may receive the ID token: an exact host (`api.rover.io`) or one leading
/// wildcard label (`*.rover.io`, which matches any subdomain of `rover.io` but neither `rover.io`
/// itself nor a look-alike such as `evilrover.io`). Matching ignores case and a trailing dot.
public struct AuthorizedDomain: Sendable, Hashable, CustomStringConvertible {
    private enum Kind: Hashable { case exact(String), subdomains(of: String) }
    private let kind: Kind

    /// Parses a pattern.
    ///
    /// - Throws: ``ConfigurationError/invalidValue(key:reason:)`` for an empty pattern, a `*` that
    ///   is not one leading `*.` label, a port, a path, white space or other characters a host
    ///   cannot hold.
    public init(_ pattern: String) throws(ConfigurationError) {
        let normalized = Self.normalize(pattern)
        func refuse(_ reason: String) -> ConfigurationError {
            .invalidValue(key: "authorizedDomains", reason: "'\(pattern)' \(reason)")
        }
        var host = normalized
        var wildcard = false
        if normalized.hasPrefix("*.") {
            wildcard = true
            host = String(normalized.dropFirst(2))
        }
        guard !host.isEmpty else { throw refuse("names no host") }
        guard !host.contains("*") else { throw refuse("may hold only one leading '*.' wildcard") }
        let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789.-:")
        guard host.allSatisfy({ allowed.contains($0) }) else {
            throw refuse("holds characters a host name cannot have (a scheme, path, port or white space?)")
        }
        guard !host.hasPrefix("."), !host.contains("..") else { throw refuse("has an empty label") }
        if host.contains(":") {
            // Only an IPv6 address may hold colons; one colon is a host with a port.
            guard !wildcard, host.filter({ $0 == ":" }).count >= 2 else { throw refuse("holds a port; list the host only") }
        }
        kind = wildcard ? .subdomains(of: host) : .exact(host)
    }

    /// Whether a request to `host` may carry the token.
    public func matches(_ host: String) -> Bool {
        let host = Self.normalize(host)
        switch kind {
        case .exact(let expected):
            return host == expected
        case .subdomains(let parent):
            return host.count > parent.count + 1 && host.hasSuffix("." + parent)
        }
    }

    public var description: String {
        switch kind {
        case .exact(let host): host
        case .subdomains(let parent): "*.\(parent)"
        }
    }

    private static func normalize(_ value: String) -> String {
        var value = value.lowercased()
        if value.hasPrefix("["), value.hasSuffix("]") { value = String(value.dropFirst().dropLast()) }
        if value.hasSuffix("."), value.count > 1 { value.removeLast() }
        return value
    }
}
