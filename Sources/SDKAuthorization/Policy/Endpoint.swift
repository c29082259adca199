import Foundation

/// The name of an endpoint in an ``AuthorizationPolicy``, e.g. ``appInboxFetch``.
public struct EndpointID: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The name.
    public let rawValue: String

    /// Creates a name.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Creates a name from a literal.
    public init(stringLiteral value: String) { self.rawValue = value }

    public var description: String { rawValue }
}

/// One HTTP endpoint: a method and a path template in which `<projectToken>` is substituted.
///
/// The template is a path under the base URL, and may hold a query
/// (`/webxp/s/<projectToken>/inappmessages?v=1`); or it is an absolute `http`/`https` URL for an
/// endpoint on another host (`https://cdn.example.com/v1/<projectToken>/content`). The project
/// token is percent-encoded for the part it lands in, so a token holding `/`, `?` or `&` cannot
/// change the path.
public struct Endpoint: Hashable, Sendable {
    /// The placeholder replaced by the project token.
    public static let projectTokenPlaceholder = "<projectToken>"

    /// The endpoint's name.
    public let id: EndpointID
    /// The HTTP method, e.g. `POST`.
    public let method: String
    /// The path (and optional query) relative to the base URL, or an absolute URL, with placeholders.
    public let pathTemplate: String

    /// Creates an endpoint.
    public init(_ id: EndpointID, method: String = "POST", path pathTemplate: String) {
        self.id = id
        self.method = method
        self.pathTemplate = pathTemplate
    }

    /// The endpoint's URL under `baseURL` for `projectToken`.
    func url(baseURL: URL, projectToken: String) -> URL? {
        let parts = pathTemplate.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let pathToken = projectToken.addingPercentEncoding(withAllowedCharacters: Self.pathSegmentAllowed) ?? ""
        let queryToken = projectToken.addingPercentEncoding(withAllowedCharacters: Self.queryValueAllowed) ?? ""
        let path = String(parts[0]).replacingOccurrences(of: Self.projectTokenPlaceholder, with: pathToken)
        var components: URLComponents?
        if isAbsolute {
            components = URLComponents(string: path)
        } else {
            components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false)
            let basePath = components?.percentEncodedPath ?? ""
            components?.percentEncodedPath = (basePath.hasSuffix("/") ? String(basePath.dropLast()) : basePath) + path
        }
        if parts.count == 2 {
            components?.percentEncodedQuery = String(parts[1]).replacingOccurrences(of: Self.projectTokenPlaceholder, with: queryToken)
        }
        return components?.url
    }

    /// Whether the template is an absolute URL rather than a path under the base URL.
    var isAbsolute: Bool {
        let lowered = pathTemplate.lowercased()
        return lowered.hasPrefix("http://") || lowered.hasPrefix("https://")
    }

    /// Why the template cannot make a URL, or nil when it can.
    var templateProblem: String? {
        if HeaderCredential.check(pathTemplate) == .controlCharacters { return "the path holds a control character" }
        if isAbsolute {
            let sample = pathTemplate.replacingOccurrences(of: Self.projectTokenPlaceholder, with: "token")
            guard let components = URLComponents(string: sample), components.host?.isEmpty == false else {
                return "'\(pathTemplate)' is not an absolute URL with a host"
            }
            return nil
        }
        return pathTemplate.hasPrefix("/") ? nil : "'\(pathTemplate)' must start with '/' or be an absolute http(s) URL"
    }

    private static let pathSegmentAllowed: CharacterSet = {
        var set = CharacterSet.urlPathAllowed
        set.remove(charactersIn: "/;?#")
        return set
    }()

    private static let queryValueAllowed: CharacterSet = {
        var set = CharacterSet.urlQueryAllowed
        set.remove(charactersIn: "&=+#;?/")
        return set
    }()
}

extension EndpointID {
    /// `POST /track/v2/projects/<projectToken>/customers`
    public static let trackCustomers: EndpointID = "trackCustomers"
    /// `POST /track/v2/projects/<projectToken>/customers/events`
    public static let trackEvents: EndpointID = "trackEvents"
    /// `POST /track/v2/projects/<projectToken>/campaigns/clicks`
    public static let trackCampaignClicks: EndpointID = "trackCampaignClicks"
    /// `POST /data/v2/projects/<projectToken>/customers/attributes`
    public static let customerAttributes: EndpointID = "customerAttributes"
    /// `POST /data/v2/projects/<projectToken>/consent/categories`
    public static let consentCategories: EndpointID = "consentCategories"
    /// `POST /webxp/s/<projectToken>/inappmessages?v=1`
    public static let inAppMessages: EndpointID = "inAppMessages"
    /// `POST /webxp/projects/<projectToken>/appinbox/fetch`
    public static let appInboxFetch: EndpointID = "appInboxFetch"
    /// `POST /webxp/projects/<projectToken>/appinbox/markasread`
    public static let appInboxMarkAsRead: EndpointID = "appInboxMarkAsRead"
    /// `POST /campaigns/send-self-check-notification?project_id=<projectToken>`
    public static let selfCheckNotification: EndpointID = "selfCheckNotification"
}
