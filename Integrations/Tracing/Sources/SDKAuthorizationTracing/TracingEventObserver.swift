import SDKAuthorization
import Tracing

/// An `AuthorizationEventObserver` that turns the framework's events into
/// swift-distributed-tracing spans and span events.
///
/// ```swift
/// let tracing = TracingEventObserver()   // InstrumentationSystem.tracer; or TracingEventObserver(tracer: myTracer)
/// let idTokens = try IDTokenStore(authorizedDomains: ["*.rover.io"], observer: tracing)
/// ```
///
/// - A token refresh becomes a span `sdkauth.refresh`, and each request's wait for a token a span
///   `sdkauth.token_wait`, each from when it started to when it ended (with `sdkauth.endpoint` for
///   a wait). An outcome other than `succeeded` sets the span's status to error and its
///   `error.type` attribute to the outcome (`failed`, `timedOut`, `cleared`, `cancelled`,
///   `deadlineExceeded`); a refresh or wait that succeeded has no `error.type`. A wait's span is a
///   child of the waiting request's span (the `ServiceContext` of its task).
/// - Requests authorized, rejections, retries, refresh-window trips and credentials dropped on a
///   redirect become events (`sdkauth.requestAuthorized`, `sdkauth.credentialRejected`, ...) on the
///   span active in the current `ServiceContext`, with these attributes where known:
///
/// | attribute | value |
/// | --- | --- |
/// | `http.response.status_code` | the rejection's or the redirect's status (OpenTelemetry's name) |
/// | `sdkauth.scheme` | the scheme, e.g. `bearer` |
/// | `sdkauth.endpoint` | the catalogue endpoint's name |
/// | `sdkauth.attempt` | 1 for a request's first try, 2 for its retry after a rejection |
///
/// Attribute names follow the OpenTelemetry semantic conventions where one names the same thing;
/// `sdkauth.*` names the rest. The attempt is not OpenTelemetry's `http.request.resend_count`: that
/// counts every resend of one HTTP request, redirects included, on that request's own client
/// span, while the attempt counts authorizations and is recorded on the caller's span. For a
/// client span per request sent, with `traceparent` propagated, wrap the transport in
/// ``TracingHTTPTransport``.
///
/// Spans are made when the refresh or wait ends, with their real start time: the duration comes
/// from the framework's monotonic clock, so a tracer sees the time each one took even when the
/// system clock moved meanwhile.
public struct TracingEventObserver: AuthorizationEventObserver {
    private let tracer: (any Tracer)?

    /// Creates an observer.
    ///
    /// - Parameter tracer: Where spans go; `nil` (the default) uses `InstrumentationSystem.tracer`
    ///   at the time of each event: the tracer `withTracer(_:_:)` bound in the task that did the
    ///   work, or the bootstrapped one.
    public init(tracer: (any Tracer)? = nil) {
        self.tracer = tracer
    }

    /// Makes the span or span event for `event`.
    public func observe(_ event: AuthorizationEvent) {
        let tracer = self.tracer ?? InstrumentationSystem.tracer
        switch event.kind {
        case .refreshFinished:
            span(tracer, "sdkauth.refresh", event)
        case .waitEnded:
            span(tracer, "sdkauth.token_wait", event)
        case .requestAuthorized, .credentialRejected, .retryScheduled, .refreshWindowExceeded, .redirectCredentialDropped:
            guard let context = ServiceContext.current, let active = tracer.activeSpan(identifiedBy: context) else { return }
            active.addEvent(SpanEvent(name: "sdkauth.\(event.kind.rawValue)", attributes: attributes(of: event)))
        default:
            break   // starts: the span is made when the refresh or wait ends
        }
    }

    private func span(_ tracer: any Tracer, _ name: String, _ event: AuthorizationEvent) {
        let end = DefaultTracerClock.now
        let seconds = min(max(event.duration ?? 0, 0), 86_400)
        let nanoseconds = UInt64(seconds * 1_000_000_000)
        let start = DefaultTracerClock.Timestamp(nanosecondsSinceEpoch: end.nanosecondsSinceEpoch - min(nanoseconds, end.nanosecondsSinceEpoch))
        let span = tracer.startSpan(name, context: ServiceContext.current ?? .topLevel, ofKind: .internal, at: start)
        span.attributes = attributes(of: event)
        if let outcome = event.outcome, outcome != .succeeded {
            span.setStatus(SpanStatus(code: .error, message: outcome.rawValue))
        }
        span.end(at: end)
    }

    private func attributes(of event: AuthorizationEvent) -> SpanAttributes {
        var attributes = SpanAttributes()
        if let scheme = event.scheme { attributes["sdkauth.scheme"] = scheme.description }
        if let endpoint = event.endpoint { attributes["sdkauth.endpoint"] = endpoint.description }
        if let status = event.status { attributes["http.response.status_code"] = status }
        if let attempt = event.attempt { attributes["sdkauth.attempt"] = attempt }
        if let outcome = event.outcome, outcome != .succeeded { attributes["error.type"] = outcome.rawValue }
        return attributes
    }
}
