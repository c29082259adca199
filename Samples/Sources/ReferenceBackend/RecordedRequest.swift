import Synchronization

/// One request received on a vendor route (the nine Engagement endpoints, `GET /rover/ticketing`,
/// the token exchange and `POST /braze/apps/<appId>/data`), as the backend saw it.
public struct RecordedRequest: Sendable, Codable, Equatable {
    /// The HTTP method, e.g. `POST`.
    public var method: String
    /// The path without the query, e.g. `/webxp/projects/abc/appinbox/fetch`.
    public var path: String
    /// The raw query without `?`, or `nil` when the URL has none.
    public var query: String?
    /// The full `Authorization` header value (several fields are joined with `, `), or `nil`.
    public var authorization: String?
    /// The full `X-Braze-Auth-Signature` header value (the SDK signature), or `nil`.
    public var signature: String?
    /// The names of all header fields, lowercased, in the order received except that `host` (when
    /// sent) comes first; repeated names repeat.
    public var headerNames: [String]
    /// The request body decoded as UTF-8 (empty when there was none).
    public var body: String

    /// Creates a record.
    public init(
        method: String,
        path: String,
        query: String?,
        authorization: String?,
        signature: String? = nil,
        headerNames: [String],
        body: String
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.authorization = authorization
        self.signature = signature
        self.headerNames = headerNames
        self.body = body
    }

    private enum CodingKeys: String, CodingKey {
        case method, path, query, authorization, signature, headerNames, body
    }

    /// Encodes every key, writing `null` for a missing query, `Authorization` or signature header.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(method, forKey: .method)
        try container.encode(path, forKey: .path)
        try container.encode(query, forKey: .query)
        try container.encode(authorization, forKey: .authorization)
        try container.encode(signature, forKey: .signature)
        try container.encode(headerNames, forKey: .headerNames)
        try container.encode(body, forKey: .body)
    }
}

final class RequestLog: Sendable {
    private let entries = Mutex<[RecordedRequest]>([])

    func append(_ record: RecordedRequest) {
        entries.withLock { $0.append(record) }
    }

    func all() -> [RecordedRequest] {
        entries.withLock { $0 }
    }

    func clear() {
        entries.withLock { $0.removeAll() }
    }
}
