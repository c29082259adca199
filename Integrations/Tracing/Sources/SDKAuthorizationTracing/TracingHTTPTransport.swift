import Foundation
import SDKAuthorization
import Tracing

/// An `HTTPTransport` that wraps another one: each request it sends gets a client span, and the
/// span's context goes out in the request's header fields (`traceparent` for a W3C Trace Context
/// tracer), so the server's spans join the caller's trace.
///
/// ```swift
/// let transport = TracingHTTPTransport(URLSessionHTTPTransport())   // or any HTTPTransport
/// let client = try AuthorizedHTTPClient(configuration: configuration, provider: provider, transport: transport)
/// ```
///
/// Every request sent is a span of its own, a child of the caller's span (the `ServiceContext` of
/// the sending task): the first try, each redirect hop and a retry after a rejection. Its name
/// and attributes follow the OpenTelemetry semantic conventions for HTTP client spans:
///
/// | attribute | value |
/// | --- | --- |
/// | span name | the method, e.g. `GET` (`HTTP` for a method OpenTelemetry does not know) |
/// | `http.request.method` | the method (`_OTHER` for one OpenTelemetry does not know, with `http.request.method_original`) |
/// | `url.full` | scheme, host, port and path: never the query, the fragment or user info, which may hold secrets |
/// | `server.address`, `server.port` | the host and the port (the scheme's default when the URL names none) |
/// | `http.response.status_code` | the response's status |
/// | `error.type` | the status for a 4xx or 5xx (the span's status is then error), the error's type when the send threw |
///
/// No header field's value and no body is ever an attribute. When the send throws, the span
/// records an error made of the thrown error's type and its text with the URL's user information,
/// query and fragment and the request's header values taken out, never the thrown error itself:
/// a transport's error text may hold the whole URL. The context is injected by the
/// instrument: the `tracer:` given, or else `InstrumentationSystem.instrument` at each send (the
/// instrument `withTracer(_:_:)` bound in the sending task, or the bootstrapped one). With no
/// instrument bootstrapped, nothing is added and the span is a no-op.
///
/// A deadline given to the send is passed on, and ``endsByDeadline`` is the wrapped
/// transport's, so wrapping changes nothing about how requests end.
public struct TracingHTTPTransport: HTTPTransport {
    /// The transport that sends the requests.
    public let transport: any HTTPTransport
    private let tracer: (any Tracer)?

    /// Creates a transport that traces the sends of `transport`.
    ///
    /// - Parameters:
    ///   - transport: The transport that sends the requests.
    ///   - tracer: Where spans go and what injects their context; `nil` (the default) uses
    ///     `InstrumentationSystem.tracer` and `InstrumentationSystem.instrument` at each send.
    public init(_ transport: any HTTPTransport, tracer: (any Tracer)? = nil) {
        self.transport = transport
        self.tracer = tracer
    }

    /// Sends `request` through the wrapped transport, inside a client span whose context it carries.
    public func send(_ request: OutgoingRequest) async throws -> ServerResponse {
        try await traced(request) { try await transport.send($0) }
    }

    /// Sends `request` through the wrapped transport by `deadline`, inside a client span whose
    /// context it carries.
    public func send(_ request: OutgoingRequest, deadline: RequestDeadline, clock: any AuthorizationClock) async throws -> ServerResponse {
        try await traced(request) { try await transport.send($0, deadline: deadline, clock: clock) }
    }

    /// The wrapped transport's.
    public var endsByDeadline: Bool { transport.endsByDeadline }

    /// The methods OpenTelemetry names; any other is `_OTHER`.
    static let knownMethods: Set<String> = ["CONNECT", "DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT", "TRACE", "QUERY"]

    private func traced(_ request: OutgoingRequest, _ send: (OutgoingRequest) async throws -> ServerResponse) async throws -> ServerResponse {
        let tracer = self.tracer ?? InstrumentationSystem.tracer
        let method = request.method.uppercased()
        let known = Self.knownMethods.contains(method)
        let span = tracer.startSpan(known ? method : "HTTP", context: ServiceContext.current ?? .topLevel, ofKind: .client)
        defer { span.end() }
        span.attributes = Self.attributes(of: request, method: method, known: known)

        var outgoing = request
        if let instrument = self.tracer {
            instrument.inject(span.context, into: &outgoing, using: HeaderFieldInjector())
        } else {
            InstrumentationSystem.instrument.inject(span.context, into: &outgoing, using: HeaderFieldInjector())
        }
        do {
            let response = try await ServiceContext.withValue(span.context) { try await send(outgoing) }
            span.attributes["http.response.status_code"] = response.statusCode
            if response.statusCode >= 400 {
                span.attributes["error.type"] = String(response.statusCode)
                span.setStatus(SpanStatus(code: .error))
            }
            return response
        } catch {
            span.attributes["error.type"] = String(reflecting: type(of: error))
            // Never the error itself: its text may hold the URL's user info and query (see RedactedSendError).
            span.recordError(RedactedSendError(error, request: request))
            span.setStatus(SpanStatus(code: .error))
            throw error
        }
    }

    /// The request's attributes: never a header value, the query or user info.
    static func attributes(of request: OutgoingRequest, method: String, known: Bool) -> SpanAttributes {
        var attributes = SpanAttributes()
        attributes["http.request.method"] = known ? method : "_OTHER"
        if !known { attributes["http.request.method_original"] = request.method }
        let url = request.url
        var components = URLComponents()
        components.scheme = url.scheme
        components.host = url.host
        components.port = url.port
        components.percentEncodedPath = URLComponents(url: url, resolvingAgainstBaseURL: true)?.percentEncodedPath ?? ""
        if let full = components.string { attributes["url.full"] = full }
        if let host = url.host { attributes["server.address"] = host }
        if let port = url.port ?? (url.scheme?.lowercased() == "https" ? 443 : url.scheme?.lowercased() == "http" ? 80 : nil) {
            attributes["server.port"] = port
        }
        return attributes
    }
}

/// Sets a context's header fields on the request, replacing any of the same name in another case.
struct HeaderFieldInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout OutgoingRequest) {
        carrier.setHeader(key, value)
    }
}
