import Foundation

/// An HTTP request as the client hands it to a transport.
public struct HTTPRequest: Sendable, Equatable, CustomStringConvertible {
    /// The method, e.g. `POST`.
    public var method: String
    /// The absolute URL.
    public var url: URL
    /// Header fields; names compare case-insensitively through ``value(forHeader:)``.
    public var headers: [String: String]
    /// The body, if any.
    public var body: Data?

    /// Creates a request.
    public init(method: String, url: URL, headers: [String: String] = [:], body: Data? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }

    /// The value of a header field, matched case-insensitively.
    public func value(forHeader name: String) -> String? {
        headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// Removes a header field, matched case-insensitively.
    public mutating func removeHeader(_ name: String) {
        for key in headers.keys where key.caseInsensitiveCompare(name) == .orderedSame {
            headers[key] = nil
        }
    }

    /// The method and URL, and the header names; never a header's value.
    public var description: String {
        "\(method) \(url.absoluteString) headers: [\(headers.keys.sorted().joined(separator: ", "))]"
    }
}

/// An HTTP response as a transport returns it. Redirects (3xx) are returned, not followed: the
/// client follows them itself so it can drop credentials when the host changes.
public struct HTTPResponse: Sendable, Equatable {
    /// The status code.
    public var statusCode: Int
    /// Header fields.
    public var headers: [String: String]
    /// The body.
    public var body: Data

    /// Creates a response.
    public init(statusCode: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.statusCode = statusCode
        self.headers = headers
        self.body = body
    }

    /// The value of a header field, matched case-insensitively.
    public func value(forHeader name: String) -> String? {
        headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}

/// Sends one HTTP request and returns the response, without following redirects.
///
/// The default is ``URLSessionTransport``. Tests use `RecordingTransport` from
/// `SDKAuthorizationTesting`; an SDK can plug in its own networking stack.
///
/// # Implementation requirements
/// Return 3xx responses as they are, without following them. Throw for transport failures
/// (no connection, timeout); return every HTTP status, including 4xx and 5xx, as a response.
/// Honour task cancellation.
public protocol HTTPTransport: Sendable {
    /// Sends `request`.
    func send(_ request: HTTPRequest) async throws -> HTTPResponse
}
