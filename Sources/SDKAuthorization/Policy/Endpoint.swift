import Foundation
internal import SDKAuthorizationPrimitives

extension Endpoint {
    /// The name of an endpoint in an ``AuthorizationPolicy``, e.g. `appInboxFetch`.
    public struct ID: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
        /// The name.
        public let rawValue: String

        /// Creates a name.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Creates a name from a literal.
        public init(stringLiteral value: String) { self.rawValue = value }

        /// The name, with anything that could forge a log line escaped.
        public var description: String { LogText.plain(rawValue, limit: 128) }
    }
}

/// One HTTP endpoint: a method and a path template with `<name>` path parameters.
///
/// The template is a path under the base URL, and may hold a query
/// (`/webxp/s/<projectToken>/inappmessages?v=1`); or it is an absolute `http`/`https` URL for an
/// endpoint on another host (`https://cdn.example.com/v1/<projectToken>/content`). Each `<name>`
/// is a parameter: `<projectToken>` comes from the configuration, others from the call
/// (`client.send("userInbox", parameters: ["userId": "42"])`). A parameter is percent-encoded for
/// the part it lands in, so a value holding `/`, `?` or `&` cannot change the path, and a value of
/// `.` or `..` is refused.
public struct Endpoint: Hashable, Sendable {
    /// The endpoint's name.
    public let id: Endpoint.ID
    /// The HTTP method, e.g. `POST`.
    public let method: String
    /// The path (and optional query) relative to the base URL, or an absolute URL, with placeholders.
    public let pathTemplate: String

    /// Creates an endpoint.
    public init(_ id: Endpoint.ID, method: String = "POST", path pathTemplate: String) {
        self.id = id
        self.method = method
        self.pathTemplate = pathTemplate
    }

    /// The names of the template's `<name>` parameters, in order.
    public var parameterNames: [String] {
        var names: [String] = []
        var rest = Substring(pathTemplate)
        while let open = rest.firstIndex(of: "<") {
            let afterOpen = rest.index(after: open)
            guard let close = rest[afterOpen...].firstIndex(of: ">") else { break }
            names.append(String(rest[afterOpen..<close]))
            rest = rest[rest.index(after: close)...]
        }
        return names
    }

    /// The endpoint's URL under `baseURL` with `parameters` substituted.
    ///
    /// - Throws: the name of a parameter that is missing, empty, `.` or `..`, or a reason the URL
    ///   cannot be built.
    func url(baseURL: URL?, parameters: [String: String], query: [URLQueryItem] = []) throws(EndpointURLError) -> URL {
        let parts = pathTemplate.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let path = try Self.substitute(String(parts[0]), parameters, allowed: Self.pathSegmentAllowed)
        var text: String
        if isAbsolute {
            text = path
        } else if let baseURL {
            // The base URL without query or fragment (the configuration refuses both), then the path.
            let base = baseURL.absoluteString
            text = (base.hasSuffix("/") ? String(base.dropLast()) : base) + path
        } else {
            throw .noBaseURL
        }
        var encodedQuery: [String] = []
        if parts.count == 2 {
            encodedQuery.append(try Self.substitute(String(parts[1]), parameters, allowed: Self.queryValueAllowed))
        }
        for item in query {
            let name = item.name.addingPercentEncoding(withAllowedCharacters: Self.queryValueAllowed) ?? ""
            if let value = item.value {
                encodedQuery.append("\(name)=\(value.addingPercentEncoding(withAllowedCharacters: Self.queryValueAllowed) ?? "")")
            } else {
                encodedQuery.append(name)
            }
        }
        if !encodedQuery.isEmpty { text += "?" + encodedQuery.joined(separator: "&") }
        // Parsed from text, never set through URLComponents' percent-encoded setters, which trap on
        // characters they do not allow.
        guard let url = URL(string: text), url.host?.isEmpty == false else { throw .malformed }
        return url
    }

    /// The origin and path pattern a request must have to be this endpoint's, or nil when the
    /// endpoint is relative and there is no base URL.
    func matcher(baseURL: URL?) -> (origin: Origin, path: PathPattern)? {
        let templatePath = String(pathTemplate.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0])
        let url: URL?
        let path: String
        if isAbsolute {
            url = URL(string: templatePath.replacingOccurrences(of: "<", with: "%3C").replacingOccurrences(of: ">", with: "%3E"))
            path = url.flatMap { URLComponents(url: $0, resolvingAgainstBaseURL: false)?.percentEncodedPath }?
                .replacingOccurrences(of: "%3C", with: "<").replacingOccurrences(of: "%3E", with: ">") ?? ""
        } else {
            url = baseURL
            let basePath = baseURL.flatMap { URLComponents(url: $0, resolvingAgainstBaseURL: false)?.percentEncodedPath } ?? ""
            path = (basePath.hasSuffix("/") ? String(basePath.dropLast()) : basePath) + templatePath
        }
        guard let url, let origin = Origin(url), let pattern = PathPattern(path.isEmpty ? "/" : path) else { return nil }
        return (origin, pattern)
    }

    /// Whether the template is an absolute URL rather than a path under the base URL.
    var isAbsolute: Bool {
        let lowered = pathTemplate.lowercased()
        return lowered.hasPrefix("http://") || lowered.hasPrefix("https://")
    }

    /// Why the template cannot make a URL, or nil when it can.
    var templateProblem: String? {
        if HeaderFieldRules.check(pathTemplate) == .forbiddenCharacters { return "the path holds a control character, white space or non-ASCII" }
        if pathTemplate.contains(" ") { return "the path holds white space" }
        for name in parameterNames where name.isEmpty || !name.utf8.allSatisfy({ HeaderFieldRules.isTokenByte($0) && $0 != UInt8(ascii: "/") }) {
            return "'<\(name)>' is not a parameter name"
        }
        let sample = parameterNames.reduce(pathTemplate) { $0.replacingOccurrences(of: "<\($1)>", with: "p") }
        let sampleParts = sample.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        var pathAllowed = CharacterSet.urlPathAllowed
        pathAllowed.insert(charactersIn: "%:")
        var queryAllowed = CharacterSet.urlQueryAllowed
        queryAllowed.insert(charactersIn: "%")
        guard sampleParts[0].unicodeScalars.allSatisfy(pathAllowed.contains),
              sampleParts.count == 1 || sampleParts[1].unicodeScalars.allSatisfy(queryAllowed.contains)
        else {
            return "\(LogText.escaped(pathTemplate)) holds characters a URL cannot carry as they are (a stray '<' or '>', a space, '#'...)"
        }
        if isAbsolute {
            guard let components = URLComponents(string: sample), components.host?.isEmpty == false else {
                return "\(LogText.escaped(pathTemplate)) is not an absolute URL with a host"
            }
            guard let url = URL(string: sample), HostName.host(of: url) != nil else {
                return "\(LogText.escaped(pathTemplate)) names a host that is not a host name, an IPv4 or a bracketed IPv6 address"
            }
            return nil
        }
        guard pathTemplate.hasPrefix("/") else { return "\(LogText.escaped(pathTemplate)) must start with '/' or be an absolute http(s) URL" }
        guard URL(string: "https://host.example" + sample) != nil else { return "\(LogText.escaped(pathTemplate)) is not a valid path" }
        return nil
    }

    private static func substitute(_ template: String, _ parameters: [String: String], allowed: CharacterSet) throws(EndpointURLError) -> String {
        var result = ""
        var rest = Substring(template)
        while let open = rest.firstIndex(of: "<") {
            result += rest[..<open]
            let afterOpen = rest.index(after: open)
            guard let close = rest[afterOpen...].firstIndex(of: ">") else { return result + rest[open...] }
            let name = String(rest[afterOpen..<close])
            guard let value = parameters[name], !value.isEmpty, value != ".", value != ".." else {
                throw .badParameter(name)
            }
            result += value.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
            rest = rest[rest.index(after: close)...]
        }
        return result + rest
    }

    private static let pathSegmentAllowed: CharacterSet = {
        var set = CharacterSet.urlPathAllowed
        set.remove(charactersIn: "/;?#%")
        return set
    }()

    private static let queryValueAllowed: CharacterSet = {
        var set = CharacterSet.urlQueryAllowed
        set.remove(charactersIn: "&=+#;?/%")
        return set
    }()
}

/// Why an endpoint's URL could not be built.
enum EndpointURLError: Error, Equatable {
    case badParameter(String)
    case noBaseURL
    case malformed

    var reason: String {
        switch self {
        case .badParameter(let name): "the path parameter '\(name)' is missing, empty, '.' or '..'"
        case .noBaseURL: "the endpoint is relative and no base URL is configured"
        case .malformed: "the URL could not be built"
        }
    }
}
