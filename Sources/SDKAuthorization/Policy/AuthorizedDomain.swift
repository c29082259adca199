import Foundation

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
    ///   cannot hold: the pattern must be a host name (letters, digits and `-` in dot-separated
    ///   labels), an IPv4 address or a bracketed IPv6 address (`[::1]`), with or without a trailing
    ///   dot. The message names the pattern, escaped and cut short.
    public init(_ pattern: String) throws(ConfigurationError) {
        try self.init(pattern, key: "authorizedDomains")
    }

    /// Parses a pattern; an error names `key`.
    init(_ pattern: String, key: String) throws(ConfigurationError) {
        func refuse(_ reason: String) -> ConfigurationError {
            .invalidValue(key: key, reason: "\(LogText.escaped(pattern, limit: 100)) \(reason)")
        }
        var host = pattern
        var wildcard = false
        if host.hasPrefix("*.") {
            wildcard = true
            host = String(host.dropFirst(2))
        }
        guard !host.isEmpty else { throw refuse("names no host") }
        guard !host.contains("*") else { throw refuse("may hold only one leading '*.' wildcard") }
        if let problem = HostName.problem(withPattern: host) { throw refuse(problem) }
        guard let normalized = HostName.normalized(host) else { throw refuse("is not a host") }
        if wildcard, HostName.isAddress(normalized) { throw refuse("puts a '*.' wildcard in front of an IP address") }
        kind = wildcard ? .subdomains(of: normalized) : .exact(normalized)
    }

    /// Whether a request to `host` may carry the token: never when `host` is not a host name or an
    /// address literal (it holds `%`, `@`, `/`, NUL, white space...).
    public func matches(_ host: String) -> Bool {
        guard let host = HostName.normalized(host) else { return false }
        switch kind {
        case .exact(let expected):
            return host == expected
        case .subdomains(let parent):
            return host.utf8.count > parent.utf8.count + 1 && host.hasSuffix("." + parent)
        }
    }

    /// Whether a request to `url` may carry the token: as ``matches(_:)`` for its host, and never
    /// when the URL spells its host with a percent escape.
    package func matches(_ url: URL) -> Bool {
        guard let host = HostName.host(of: url) else { return false }
        return matches(host)
    }

    public var description: String {
        switch kind {
        case .exact(let host): host
        case .subdomains(let parent): "*.\(parent)"
        }
    }

}
