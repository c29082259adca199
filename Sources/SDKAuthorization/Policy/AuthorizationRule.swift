import Foundation
internal import SDKAuthorizationPrimitives

/// A rule that gives requests the policy's catalogue does not name a scheme, by scheme, host,
/// port, path and method.
///
/// ```swift
/// var policy = AuthorizationPolicy()
/// try policy.add(AuthorizationRule(host: "api.example.com", path: "/v2/users/*/inbox", method: "GET", scheme: .bearer))
/// try policy.add(AuthorizationRule(host: "*.example.com", path: "/public/**", scheme: .none))
/// try policy.add(AuthorizationRule(host: "uploads.example.com:8443", path: "/v1/**", scheme: .bearer))
/// try policy.add(AuthorizationRule(origin: baseURL, path: "/braze/**", scheme: .signature))  // e.g. http://127.0.0.1:8080
/// ```
///
/// - `host`: `[scheme "://"] host [":" port]`, matched as ``AuthorizedDomain`` matches: a request
///   on another scheme or port matches no rule, so a credential for `api.example.com` never goes
///   to `http://api.example.com` or `https://api.example.com:8443`. A rule always names its host,
///   so a credential never goes to a host the SDK author did not name.
///   ``init(origin:path:method:scheme:)`` takes the scheme, host and port of a URL instead.
/// - `path`: `/`-separated segments; `*` or `<name>` matches one segment, a final `**` matches any
///   rest (none included). Segments compare exactly, after percent-decoding and after dot segments
///   are resolved as a server resolves them (`/v1/../admin` is `/admin` and does not match
///   `/v1/**`; `%2e` is a dot); a segment that decodes to hold `/` or NUL matches only a wildcard.
///   The query is ignored. A path a server may resolve elsewhere than this match does (an encoded
///   `/`, `\` or `.`, a `\`, `..;`, a double encoding, overlong UTF-8, `//` with `..`) is refused
///   by ``RequestAuthorizer`` with ``RequestError/Code/ambiguousPath`` when a rule whose path is not
///   `/**` matches it, before any credential is asked for.
/// - `method`: `nil` matches every method.
public struct AuthorizationRule: Sendable, Hashable, CustomStringConvertible {
    /// The scheme, host pattern and port.
    public let host: AuthorizedDomain
    /// The path pattern.
    public let path: String
    /// The method, upper-cased, or `nil` for every method.
    public let method: String?
    /// The scheme of the requests it matches.
    public let scheme: AuthorizationScheme

    let pathPattern: PathPattern

    /// Creates a rule for requests to `host`, a pattern `[scheme "://"] host [":" port]` (``AuthorizedDomain``).
    ///
    /// - Throws: ``ConfigurationError/invalidValue(key:reason:)`` for a host pattern that
    ///   ``AuthorizedDomain/init(_:)`` refuses (key `rule host`), a path that does not start with
    ///   `/` or holds `**` anywhere but at its end, or a method that is not an HTTP token.
    public init(host: String, path: String = "/**", method: String? = nil, scheme: AuthorizationScheme) throws(ConfigurationError) {
        try self.init(domain: AuthorizedDomain(host, key: "rule host"), path: path, method: method, scheme: scheme)
    }

    /// Creates a rule for requests to the scheme, host and port of `origin`, as
    /// ``AuthorizedDomain/init(origin:)``; its path is ignored: `path` is the whole path a request
    /// must have. For a rule on a configured base URL, which may be `http://127.0.0.1:8080` in tests.
    ///
    /// - Throws: ``ConfigurationError/invalidValue(key:reason:)`` for an `origin` that
    ///   ``AuthorizedDomain/init(origin:)`` refuses (key `rule host`), or a bad path or method as
    ///   ``init(host:path:method:scheme:)`` does.
    public init(origin: URL, path: String = "/**", method: String? = nil, scheme: AuthorizationScheme) throws(ConfigurationError) {
        try self.init(domain: AuthorizedDomain(origin: origin, key: "rule host"), path: path, method: method, scheme: scheme)
    }

    private init(domain: AuthorizedDomain, path: String, method: String?, scheme: AuthorizationScheme) throws(ConfigurationError) {
        self.host = domain
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
        // A rule for every path decodes none (the quick start's rule: "1 prepare" rows, the seam against Alamofire).
        return pathPattern.matchesEveryPath || pathPattern.matches(RequestPath(request.url.percentEncodedPathForMatching))
    }

    /// Whether this rule would match `request` but for its scheme or port: the request goes to the
    /// rule's host, method and path, over `http` where the rule says `https` (or the reverse), or on
    /// another port.
    func matchesButForSchemeOrPort(_ request: OutgoingRequest) -> Bool {
        if let method, method != request.method.uppercased() { return false }
        guard let host = request.url.host, self.host.matches(host), !self.host.matches(request.url) else { return false }
        return pathPattern.matchesEveryPath || pathPattern.matches(RequestPath(request.url.percentEncodedPathForMatching))
    }

    public var description: String {
        "\(method ?? "*") \(host)\(path) -> \(scheme)"
    }
}

/// A path pattern: literal segments, one-segment wildcards (`*`, `<name>`) and an optional final
/// `**`, matched as ``AuthorizationRule`` describes, dot segments removed as RFC 3986 section 5.2.4
/// says. Segments compare byte for byte, on UTF-8, without Foundation: literal segments are
/// decoded once, here; a request path once per ``matches(_:)``.
struct PathPattern: Sendable, Hashable {
    enum Segment: Sendable, Hashable { case literal([UInt8]), any }
    let segments: [Segment]
    let matchesRest: Bool

    /// Whether every path matches (`/**`): a pattern that scopes nothing, so a path a server may
    /// resolve elsewhere (``RequestPath/isAmbiguous``) stays in its scope.
    var matchesEveryPath: Bool { segments.isEmpty && matchesRest }

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
                continue
            }
            var decoded: [UInt8] = []
            _ = RequestPath.decode(part.utf8, into: &decoded)
            switch RequestPath.dotSegment(decoded[...]) {
            case 1: continue
            case 2: if !segments.isEmpty { segments.removeLast() }
            default: segments.append(.literal(decoded))
            }
        }
        self.segments = segments
        self.matchesRest = rest
    }

    /// Whether the percent-encoded request path `path` matches. A path without `%` or dot segments
    /// is compared where it lies, without decoding or allocating.
    func matches(_ path: String) -> Bool {
        var path = path
        return path.withUTF8 { bytes in matchesPlain(bytes) } ?? matches(RequestPath(path))
    }

    /// Whether `bytes`, a path holding no `%` and no dot segment, matches; `nil` when it holds either.
    private func matchesPlain(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool? {
        let slash = UInt8(ascii: "/"), dot = UInt8(ascii: ".")
        guard let first = bytes.firstIndex(of: slash) else { return nil }
        var matched = true
        var index = 0
        var start = first + 1
        while true {
            var end = start
            while end < bytes.count, bytes[end] != slash {
                if bytes[end] == UInt8(ascii: "%") { return nil }
                end += 1
            }
            let length = end - start
            if length == 1 && bytes[start] == dot || length == 2 && bytes[start] == dot && bytes[start + 1] == dot { return nil }
            let isLast = end == bytes.count
            if !(isLast && length == 0) {
                if index < segments.count {
                    switch segments[index] {
                    case .any: if length == 0 { matched = false }
                    case .literal(let literal): if !literal.elementsEqual(UnsafeBufferPointer(rebasing: bytes[start..<end])) { matched = false }
                    }
                } else if !matchesRest {
                    matched = false
                }
                index += 1
            }
            if isLast { break }
            start = end + 1
        }
        return matched && (matchesRest ? index >= segments.count : index == segments.count)
    }

    /// Whether `path`, decoded once for every pattern it is compared with, matches.
    func matches(_ path: RequestPath) -> Bool {
        guard matchesRest ? path.count >= segments.count : path.count == segments.count else { return false }
        for (index, segment) in segments.enumerated() {
            switch segment {
            case .any:
                if path.isEmpty(index) { return false }
            case .literal(let literal):
                if path.isOpaque(index) || !path.bytes(index).elementsEqual(literal) { return false }
            }
        }
        return true
    }
}

/// A request path, percent-decoded once on its UTF-8 bytes and with its dot segments removed, ready
/// to be compared with any number of ``PathPattern``s. A trailing `/` is ignored.
struct RequestPath: Sendable {
    /// Every segment's decoded bytes, one after the other.
    private var decoded: [UInt8] = []
    /// Where each remaining segment lies in ``decoded``, and whether it decoded to hold `/` or NUL.
    private var segments: [(range: Range<Int>, opaque: Bool)] = []
    /// Whether a server may resolve the path to another one than this matcher does
    /// (``isAmbiguous(raw:decoded:)``, or an empty segment in a path with a `..` segment, which a
    /// server that merges `//` resolves elsewhere): a path-scoped rule must not authorize it.
    private(set) var isAmbiguous = false

    /// Decodes `path`, the path as the URL spells it (percent-encoding kept), from its first `/`.
    init(_ path: String) {
        var path = path
        path.withUTF8 { bytes in
            decoded.reserveCapacity(bytes.count)
            // At most one segment per `/`.
            segments.reserveCapacity(bytes.count { $0 == UInt8(ascii: "/") })
            guard let first = bytes.firstIndex(of: UInt8(ascii: "/")) else { return }
            var start = first + 1
            var emptySegment = false, dotDotSegment = false
            while true {
                let end = bytes[start...].firstIndex(of: UInt8(ascii: "/")) ?? bytes.endIndex
                let from = decoded.count
                let opaque = Self.decode(bytes[start..<end], into: &decoded)
                let isLast = end == bytes.endIndex
                if !isAmbiguous, Self.isAmbiguous(raw: bytes[start..<end], decoded: decoded[from...]) { isAmbiguous = true }
                if start == end, !isLast { emptySegment = true }
                switch Self.dotSegment(decoded[from...]) {
                case 1:
                    decoded.removeSubrange(from...)
                case 2:
                    dotDotSegment = true
                    decoded.removeSubrange(from...)
                    if let last = segments.popLast() { decoded.removeSubrange(last.range) }
                default:
                    // A trailing empty segment (`/v1/`) is no segment.
                    if !(isLast && from == decoded.count) { segments.append((from..<decoded.count, opaque)) }
                }
                if isLast { break }
                start = end + 1
            }
            // `/v1//../admin` is `/v1/admin` here, but `/admin` to a server that merges `//` first (nginx).
            if emptySegment && dotDotSegment { isAmbiguous = true }
        }
    }

    /// How many segments remain.
    var count: Int { segments.count }
    func isEmpty(_ index: Int) -> Bool { segments[index].range.isEmpty }
    func isOpaque(_ index: Int) -> Bool { segments[index].opaque }
    func bytes(_ index: Int) -> ArraySlice<UInt8> { decoded[segments[index].range] }

    /// Appends `segment` percent-decoded to `output`, or as it is when one of its `%` is not
    /// followed by two hex digits; answers whether the decoded bytes hold `/` or NUL.
    static func decode(_ segment: some Collection<UInt8>, into output: inout [UInt8]) -> Bool {
        let start = output.count
        var opaque = false
        var iterator = segment.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                output.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                output.removeSubrange(start...)
                output.append(contentsOf: segment)
                return false
            }
            let value = high << 4 | low
            if value == UInt8(ascii: "/") || value == 0 { opaque = true }
            output.append(value)
        }
        return opaque
    }

    /// Whether a server may read the segment `raw` (as the URL spells it; `decoded`, percent-decoded)
    /// as something else than this matcher does, and so resolve the path outside a rule's scope:
    /// - an encoded `/`, `\`, `.` or NUL, or a raw `\` (IIS and Spring take `\` for `/`; a
    ///   server that decodes before splitting or resolving sees a separator or a dot segment);
    /// - an encoded `%` before two hex digits or `u` (`%252f`: a server that decodes twice sees `/`),
    ///   or a `%` without two hex digits (`%u002e`, which IIS reads as `.`);
    /// - decoded bytes that are not UTF-8 (`%c0%ae`, an overlong `.` some decoders accept);
    /// - a dot segment with a `;` parameter (`..;` is `..` to Tomcat and Spring), or a segment of
    ///   dots and blanks other than `.` and `..` (`...`, `..%20`: Windows drops trailing dots and blanks).
    static func isAmbiguous(raw: some Collection<UInt8>, decoded: ArraySlice<UInt8>) -> Bool {
        let percent = UInt8(ascii: "%"), dot = UInt8(ascii: "."), backslash = UInt8(ascii: "\\")
        var index = raw.startIndex
        var sawNonASCII = false
        while index != raw.endIndex {
            let byte = raw[index]
            raw.formIndex(after: &index)
            if byte == backslash { return true }
            guard byte == percent else { continue }
            guard index != raw.endIndex, let high = hexValue(raw[index]) else { return true }
            raw.formIndex(after: &index)
            guard index != raw.endIndex, let low = hexValue(raw[index]) else { return true }
            raw.formIndex(after: &index)
            let value = high << 4 | low
            switch value {
            case UInt8(ascii: "/"), backslash, dot, 0:
                return true
            case percent:
                // `%25` then two hex digits or `u`: a second decoding makes another byte.
                var next = index
                if next != raw.endIndex, raw[next] | 0x20 == UInt8(ascii: "u") { return true }
                if next != raw.endIndex, hexValue(raw[next]) != nil {
                    raw.formIndex(after: &next)
                    if next != raw.endIndex, hexValue(raw[next]) != nil { return true }
                }
            case 0x80...:
                sawNonASCII = true
            default:
                break
            }
        }
        if sawNonASCII, !String(decoding: decoded, as: UTF8.self).utf8.elementsEqual(decoded) { return true }
        // The segment up to its first `;`, as Tomcat and Spring read it.
        let name = decoded.prefix { $0 != UInt8(ascii: ";") }
        let isBlank: (UInt8) -> Bool = { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
        guard name.contains(dot), name.allSatisfy({ $0 == dot || isBlank($0) }) else { return false }
        // `.` and `..` alone are resolved here as every server resolves them.
        return name.count != decoded.count || dotSegment(name) == 0
    }

    /// 1 for a decoded `.`, 2 for `..`, 0 for any other segment.
    static func dotSegment(_ bytes: ArraySlice<UInt8>) -> Int {
        guard (1...2).contains(bytes.count), bytes.allSatisfy({ $0 == UInt8(ascii: ".") }) else { return 0 }
        return bytes.count
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

extension URL {
    /// The path as it appears in the URL, percent-encoding kept.
    var percentEncodedPathForMatching: String {
        if #available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *) {
            return path(percentEncoded: true)
        }
        return URLComponents(url: self, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? path
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
