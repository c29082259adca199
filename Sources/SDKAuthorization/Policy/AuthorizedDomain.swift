import Foundation
internal import SDKAuthorizationPrimitives

/// Where a credential may go: a scheme, a host pattern and a port.
///
/// A pattern is `[scheme "://"] host [":" port]`:
///
/// - `host` is an exact host (`api.rover.io`) or one leading wildcard label (`*.rover.io`, which
///   matches any subdomain of `rover.io` but neither `rover.io` itself nor a look-alike such as
///   `evilrover.io`). It is a host name (letters, digits and `-` in dot-separated labels), an IPv4
///   address or a bracketed IPv6 address (`[::1]`). Case and a trailing dot are ignored.
/// - `scheme` is `https`, the default. `http` is allowed only on a loopback host (`localhost`, an
///   IPv4 address in `127.0.0.0/8`, `[::1]`), for a local test server: anywhere else the
///   credential would cross the network in the clear.
/// - `port` is a number from 1 to 65535; without one, the scheme's default (443 for https, 80 for
///   http). A request on another port does not match.
///
/// | Pattern | Matches |
/// | --- | --- |
/// | `api.example.com` | `https://api.example.com` (port 443) only |
/// | `*.rover.io` | `https://` any subdomain of `rover.io`, port 443 |
/// | `api.example.com:8443` | `https://api.example.com:8443` only |
/// | `https://*.example.com:8443` | `https://` any subdomain of `example.com`, port 8443 |
/// | `http://127.0.0.1:8080` | `http://127.0.0.1:8080` only |
/// | `[::1]:8080` | `https://[::1]:8080` only |
///
/// Two domains are equal when they name the same scheme, host pattern and port.
public struct AuthorizedDomain: Sendable, Hashable, CustomStringConvertible {
    private enum Kind: Hashable { case exact(String), subdomains(of: String) }
    private let kind: Kind
    /// `http` (on a loopback host) rather than `https`.
    private let isHTTP: Bool
    /// The port a request must be on, its scheme's default included.
    private let port: Int

    /// Parses a pattern, `[scheme "://"] host [":" port]`.
    ///
    /// - Throws: ``ConfigurationError/invalidValue(key:reason:)`` with the key `authorizedDomains`
    ///   for a pattern that breaks the rules of ``AuthorizedDomain`` or names no host, or holds a
    ///   path, white space or an IPv6 address outside brackets; the message names the pattern,
    ///   escaped and cut short.
    public init(_ pattern: String) throws(ConfigurationError) {
        try self.init(pattern, key: "authorizedDomains")
    }

    /// Parses a pattern; an error names `key`.
    init(_ pattern: String, key: String) throws(ConfigurationError) {
        func refuse(_ reason: String) -> ConfigurationError {
            .invalidValue(key: key, reason: "\(LogText.escaped(pattern, limit: 100)) \(reason)")
        }
        var rest = Substring(pattern)
        var isHTTP = false
        // A "://" after a '/' lies in a path, which is refused below.
        if let separator = rest.range(of: "://"), !rest[..<separator.lowerBound].contains("/") {
            switch rest[..<separator.lowerBound].lowercased() {
            case "https": break
            case "http": isHTTP = true
            default: throw refuse("names a scheme other than https, or http on a loopback host")
            }
            rest = rest[separator.upperBound...]
        }
        guard !rest.contains("/") else {
            throw refuse("holds a path: name only the host, with an optional scheme and port ([scheme://]host[:port])")
        }
        var wildcard = false
        if rest.hasPrefix("*.") {
            wildcard = true
            rest = rest.dropFirst(2)
        }
        var host = rest
        var portText: Substring?
        if rest.hasPrefix("["), let close = rest.firstIndex(of: "]"), rest[rest.index(after: close)...].first == ":" {
            host = rest[...close]
            portText = rest[rest.index(rest.index(after: close), offsetBy: 1)...]
        } else if !rest.hasPrefix("[") {
            switch rest.count(where: { $0 == ":" }) {
            case 0: break
            case 1:
                let colon = rest.firstIndex(of: ":")!
                host = rest[..<colon]
                portText = rest[rest.index(after: colon)...]
            default:
                throw refuse("holds more than one ':': write an IPv6 address in brackets, as [::1] or [::1]:8080")
            }
        }
        guard !host.isEmpty else { throw refuse("names no host") }
        var port = isHTTP ? 80 : 443
        if let portText {
            guard !portText.isEmpty else { throw refuse("names no port after the ':'") }
            guard let number = Self.port(portText) else { throw refuse("has a port that is not a number from 1 to 65535") }
            port = number
        }
        guard !host.contains("*") else { throw refuse("may hold only one leading '*.' wildcard") }
        guard let normalized = HostName.normalized(String(host)) else {
            throw refuse("is not a host name (letters, digits and '-' in labels of at most 63 characters), an IPv4 address or a bracketed IPv6 address")
        }
        if wildcard, HostName.isAddress(normalized) { throw refuse("puts a '*.' wildcard in front of an IP address") }
        if isHTTP, wildcard || !HostName.isNormalizedLoopback(normalized) {
            throw refuse("uses http, which is allowed only on a loopback host (localhost, 127.0.0.0/8, [::1]); name the host alone, or with https://")
        }
        self.kind = wildcard ? .subdomains(of: normalized) : .exact(normalized)
        self.isHTTP = isHTTP
        self.port = port
    }

    /// The domain of `origin`'s scheme, host (exact) and port; its path, query and user information
    /// are ignored. `https://api.example.com/v2` gives `api.example.com`;
    /// `http://127.0.0.1:8080/api` gives `http://127.0.0.1:8080`. For a request to a configured base
    /// URL, whatever its scheme and port:
    ///
    /// ```swift
    /// let idTokens = try IDTokenStore(authorizedDomains: [AuthorizedDomain(origin: baseURL)])
    /// ```
    ///
    /// - Throws: ``ConfigurationError/invalidValue(key:reason:)`` with the key `authorizedDomains`
    ///   when `origin` is not an `https` URL, or an `http` one on a loopback host, with a host name
    ///   or address and a port from 1 to 65535. The message names the URL without its user
    ///   information or query.
    public init(origin: URL) throws(ConfigurationError) {
        try self.init(origin: origin, key: "authorizedDomains")
    }

    /// ``init(origin:)``; an error names `key`.
    init(origin: URL, key: String) throws(ConfigurationError) {
        func refuse(_ reason: String) -> ConfigurationError {
            .invalidValue(key: key, reason: "\(LogText.escaped(ConfigurationError.sanitizedURLText(origin.absoluteString), limit: 100)) \(reason)")
        }
        let scheme = origin.scheme?.lowercased()
        guard scheme == "https" || scheme == "http" else { throw refuse("is not an https URL (or an http URL on a loopback host)") }
        guard let host = HostName.host(of: origin) else {
            throw refuse("names no host name (letters, digits and '-' in labels of at most 63 characters), IPv4 address or IPv6 address")
        }
        let isHTTP = scheme == "http"
        let port = origin.port ?? (isHTTP ? 80 : 443)
        guard (1...65_535).contains(port) else { throw refuse("has a port that is not a number from 1 to 65535") }
        if isHTTP, !HostName.isNormalizedLoopback(host) {
            throw refuse("uses http, which is allowed only on a loopback host (localhost, 127.0.0.0/8, [::1]); use https")
        }
        self.kind = .exact(host)
        self.isHTTP = isHTTP
        self.port = port
    }

    /// `text`, ASCII digits only, as a port from 1 to 65535; `nil` otherwise.
    private static func port(_ text: Substring) -> Int? {
        guard text.utf8.count <= 5 else { return nil }
        var value = 0
        for byte in text.utf8 {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return (1...65_535).contains(value) ? value : nil
    }

    /// Whether a request to `host` may carry the credential, comparing the host only: the scheme
    /// and port are not known here, and are not compared (``matches(_:)-(URL)`` compares them).
    /// Never when `host` is not a host name or an address literal (it holds `%`, `@`, `/`, NUL,
    /// white space...).
    public func matches(_ host: String) -> Bool {
        guard let host = HostName.normalized(host) else { return false }
        return matches(normalized: host)
    }

    /// Whether a request to `url` may carry the credential: its scheme (in any case) is the
    /// domain's, its port (`url.port`, else its scheme's default) is the domain's, and its host
    /// matches the host pattern as in ``matches(_:)-(String)``; never when the URL spells its host
    /// with a percent escape (`api%2Eexample.com`).
    public func matches(_ url: URL) -> Bool {
        // The cheap comparisons first: the scheme's bytes, then the port.
        guard let scheme = url.scheme, scheme.utf8.elementsEqual(isHTTP ? "http".utf8 : "https".utf8, by: { HeaderFieldRules.asciiLowercased($0) == $1 }),
              (url.port ?? (isHTTP ? 80 : 443)) == port,
              let host = HostName.host(of: url)
        else { return false }
        return matches(normalized: host)
    }

    /// Whether `host`, normalized, matches the host pattern.
    private func matches(normalized host: String) -> Bool {
        switch kind {
        case .exact(let expected):
            return host == expected
        case .subdomains(let parent):
            return host.utf8.count > parent.utf8.count + 1 && host.hasSuffix("." + parent)
        }
    }

    /// The pattern, with the scheme and the port only when they are not the defaults:
    /// `*.rover.io`, `api.example.com:8443`, `http://127.0.0.1:8080`, `[::1]`. It parses back
    /// to an equal domain.
    public var description: String {
        var text = isHTTP ? "http://" : ""
        switch kind {
        case .exact(let host): text += host.contains(":") ? "[\(host)]" : host
        case .subdomains(let parent): text += "*.\(parent)"
        }
        if port != (isHTTP ? 80 : 443) { text += ":\(port)" }
        return text
    }
}
