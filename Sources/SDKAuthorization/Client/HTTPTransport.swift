import Foundation
internal import SDKAuthorizationPrimitives

/// An HTTP request before or after authorization: method, URL (with path and query), header
/// fields and body: what the framework authorizes and what an ``HTTPTransport`` sends.
///
/// The name leaves `HTTPRequest` to swift-http-types and `URLRequest` to Foundation.
public struct OutgoingRequest: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
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

    /// The value of a header field, its name matched without regard to the case of ASCII letters.
    public func value(forHeader name: String) -> String? {
        if let exact = headers[name] { return exact }
        return headers.first { HeaderFieldRules.sameName($0.key, name) }?.value
    }

    /// Removes a header field, its name matched without regard to the case of ASCII letters; returns
    /// whether one was there.
    @discardableResult
    public mutating func removeHeader(_ name: String) -> Bool {
        var removed = false
        for key in headers.keys where HeaderFieldRules.sameName(key, name) {
            headers[key] = nil
            removed = true
        }
        return removed
    }

    /// Sets a header field, replacing any field of the same name in another case.
    public mutating func setHeader(_ name: String, _ value: String) {
        removeHeader(name)
        headers[name] = value
    }

    /// The method, the URL without its query, and the header names; never a header's value.
    public var description: String {
        "\(method) \(LogText.url(url)) headers: [\(headers.keys.sorted().joined(separator: ", "))]"
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror {
        Mirror(self, children: ["method": method, "url": LogText.url(url), "headerNames": headers.keys.sorted(), "bodyBytes": body?.count ?? 0], displayStyle: .struct)
    }
}

/// An HTTP response as a transport returns it: status, header fields and body. Redirects (3xx) are
/// returned, not followed: the client follows them itself so it can drop credentials when the
/// origin changes.
///
/// The name leaves `HTTPResponse` to swift-http-types and `HTTPURLResponse` to Foundation.
public struct ServerResponse: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
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

    /// The value of a header field, its name matched without regard to the case of ASCII letters.
    public func value(forHeader name: String) -> String? {
        if let exact = headers[name] { return exact }
        return headers.first { HeaderFieldRules.sameName($0.key, name) }?.value
    }

    /// The status and the header names; never a header's value (a server may echo a token in
    /// `WWW-Authenticate`) and never the body.
    public var description: String {
        "HTTP \(statusCode) headers: [\(headers.keys.sorted().joined(separator: ", "))] body: \(body.count) bytes"
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror {
        Mirror(self, children: ["statusCode": statusCode, "headerNames": headers.keys.sorted(), "bodyBytes": body.count], displayStyle: .struct)
    }
}

/// Sends one HTTP request and returns the response, without following redirects.
///
/// The default is ``URLSessionHTTPTransport``. Tests use `RecordingTransport` from
/// `SDKAuthorizationTesting`; an SDK can plug in its own networking stack (the
/// `SDKAuthorizationAsyncHTTPClient` adapter package has one over AsyncHTTPClient).
///
/// # Implementation requirements
/// Throw for transport failures (no connection, timeout); return every HTTP status, 3xx, 4xx and
/// 5xx included, as a response. Honour task cancellation: the client cancels the sending task when
/// a request's deadline passes (the request itself returns at the deadline either way).
///
/// A transport that can end a send by a deadline itself (its own timer, or a deadline its HTTP
/// library takes) implements ``send(_:deadline:clock:)`` and says so with ``endsByDeadline``; the
/// client then sends in the caller's task rather than in a task of its own per send.
public protocol HTTPTransport: Sendable {
    /// Sends `request`.
    func send(_ request: OutgoingRequest) async throws -> ServerResponse

    /// Sends `request`, and ends by `deadline` (on `clock`'s monotonic time) when
    /// ``endsByDeadline`` is `true`: returns the response, or throws (any error; the request then
    /// fails with ``RequestError/Code/deadlineExceeded`` when the deadline has passed). The default
    /// calls ``send(_:)``.
    func send(_ request: OutgoingRequest, deadline: RequestDeadline, clock: any AuthorizationClock) async throws -> ServerResponse

    /// Whether ``send(_:deadline:clock:)`` ends by its deadline without help. The default is `false`.
    /// It is read once, when the client is made with the transport.
    var endsByDeadline: Bool { get }
}

extension HTTPTransport {
    public func send(_ request: OutgoingRequest, deadline: RequestDeadline, clock: any AuthorizationClock) async throws -> ServerResponse {
        try await send(request)
    }

    public var endsByDeadline: Bool { false }
}
