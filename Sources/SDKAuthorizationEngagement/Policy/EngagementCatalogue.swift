import SDKAuthorization

// The Bloomreach Engagement endpoint catalogue: the nine endpoints' names and the policy that
// gives each its default scheme.
extension Endpoint.ID {
    /// `POST /track/v2/projects/<projectToken>/customers`
    public static let trackCustomers: Endpoint.ID = "trackCustomers"
    /// `POST /track/v2/projects/<projectToken>/customers/events`
    public static let trackEvents: Endpoint.ID = "trackEvents"
    /// `POST /track/v2/projects/<projectToken>/campaigns/clicks`
    public static let trackCampaignClicks: Endpoint.ID = "trackCampaignClicks"
    /// `POST /data/v2/projects/<projectToken>/customers/attributes`
    public static let customerAttributes: Endpoint.ID = "customerAttributes"
    /// `POST /data/v2/projects/<projectToken>/consent/categories`
    public static let consentCategories: Endpoint.ID = "consentCategories"
    /// `POST /webxp/s/<projectToken>/inappmessages?v=1`
    public static let inAppMessages: Endpoint.ID = "inAppMessages"
    /// `POST /webxp/projects/<projectToken>/appinbox/fetch`
    public static let appInboxFetch: Endpoint.ID = "appInboxFetch"
    /// `POST /webxp/projects/<projectToken>/appinbox/markasread`
    public static let appInboxMarkAsRead: Endpoint.ID = "appInboxMarkAsRead"
    /// `POST /campaigns/send-self-check-notification?project_id=<projectToken>`
    public static let selfCheckNotification: Endpoint.ID = "selfCheckNotification"
}

extension AuthorizationPolicy {
    /// The nine Bloomreach Engagement endpoints with their default schemes: API key everywhere,
    /// except the two app-inbox endpoints, which carry the customer token when `advancedAuthEnabled`.
    public static func engagement(advancedAuthEnabled: Bool) -> AuthorizationPolicy {
        let inbox: AuthorizationScheme = advancedAuthEnabled ? .bearer : .apiKey
        let table: [(Endpoint.ID, String, AuthorizationScheme)] = [
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
        var policy = AuthorizationPolicy()
        for (id, path, scheme) in table {
            // Constant names and templates that `add` accepts (AuthorizationPolicyTests counts all nine).
            try? policy.add(Endpoint(id, path: path), scheme: scheme)
        }
        return policy
    }
}
