/// The nine Bloomreach Engagement (Exponea) endpoints of SPEC.md section 2.
///
/// The raw value is the case name, which is also what the backend reports as `"endpoint"` in a
/// success answer. Every endpoint is routed as `POST`.
public enum EngagementEndpoint: String, CaseIterable, Sendable, Codable {
    /// `POST /track/v2/projects/<projectToken>/customers`
    case trackCustomers
    /// `POST /track/v2/projects/<projectToken>/customers/events`
    case trackEvents
    /// `POST /track/v2/projects/<projectToken>/campaigns/clicks`
    case trackCampaignClicks
    /// `POST /data/v2/projects/<projectToken>/customers/attributes`
    case customerAttributes
    /// `POST /data/v2/projects/<projectToken>/consent/categories`
    case consentCategories
    /// `POST /webxp/s/<projectToken>/inappmessages?v=1`
    case inAppMessages
    /// `POST /webxp/projects/<projectToken>/appinbox/fetch`
    case appInboxFetch
    /// `POST /webxp/projects/<projectToken>/appinbox/markasread`
    case appInboxMarkAsRead
    /// `POST /campaigns/send-self-check-notification?project_id=<projectToken>`
    case selfCheckNotification

    /// The path template exactly as SPEC.md writes it, with `<projectToken>` as the placeholder and
    /// the query (if any) included, e.g. `/webxp/s/<projectToken>/inappmessages?v=1`.
    public var pathTemplate: String {
        switch self {
        case .trackCustomers: "/track/v2/projects/<projectToken>/customers"
        case .trackEvents: "/track/v2/projects/<projectToken>/customers/events"
        case .trackCampaignClicks: "/track/v2/projects/<projectToken>/campaigns/clicks"
        case .customerAttributes: "/data/v2/projects/<projectToken>/customers/attributes"
        case .consentCategories: "/data/v2/projects/<projectToken>/consent/categories"
        case .inAppMessages: "/webxp/s/<projectToken>/inappmessages?v=1"
        case .appInboxFetch: "/webxp/projects/<projectToken>/appinbox/fetch"
        case .appInboxMarkAsRead: "/webxp/projects/<projectToken>/appinbox/markasread"
        case .selfCheckNotification: "/campaigns/send-self-check-notification?project_id=<projectToken>"
        }
    }

    /// The HTTP method of the endpoint (always `POST`).
    public var method: String { "POST" }

    /// The path and query for a concrete project token, e.g. `/track/v2/projects/abc/customers`.
    ///
    /// The token is inserted as is; project tokens are URL-safe identifiers.
    public func path(projectToken: String) -> String {
        pathTemplate.replacingOccurrences(of: "<projectToken>", with: projectToken)
    }

    /// The Hummingbird route: the path part with `<projectToken>` as the `:projectToken` parameter.
    var routePath: String {
        let pathPart = pathTemplate.split(separator: "?", maxSplits: 1).first.map(String.init) ?? pathTemplate
        return pathPart.replacingOccurrences(of: "<projectToken>", with: ":projectToken")
    }

    /// Where the project token is read from: the `:projectToken` path parameter, or this query item.
    var projectTokenQueryItem: String? {
        self == .selfCheckNotification ? "project_id" : nil
    }

    /// Query items that must be present with exactly this value.
    var requiredQueryItems: [(name: String, value: String)] {
        self == .inAppMessages ? [("v", "1")] : []
    }
}
