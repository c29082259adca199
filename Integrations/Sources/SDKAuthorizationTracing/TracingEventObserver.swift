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
///   `sdkauth.token_wait`, each from when it started to when it ended, with the attribute
///   `sdkauth.outcome` (and `sdkauth.endpoint` for a wait). An outcome other than `succeeded`
///   sets the span's status to error. A wait's span is a child of the waiting request's span
///   (the `ServiceContext` of its task).
/// - Requests authorized, rejections, retries, refresh-window trips and credentials dropped on a
///   redirect become events (`sdkauth.requestAuthorized`, `sdkauth.credentialRejected`, ...) on the
///   span active in the current `ServiceContext`, with `sdkauth.scheme`, `sdkauth.endpoint`,
///   `sdkauth.status` and `sdkauth.attempt` attributes where known.
///
/// Spans are made when the refresh or wait ends, with their real start time: the duration comes
/// from the framework's monotonic clock, so a tracer sees the time each one took even when the
/// system clock moved meanwhile.
public struct TracingEventObserver: AuthorizationEventObserver {
    private let tracer: (any Tracer)?

    /// Creates an observer.
    ///
    /// - Parameter tracer: Where spans go; `nil` (the default) uses `InstrumentationSystem.tracer`
    ///   at the time of each event.
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
        if let status = event.status { attributes["sdkauth.status"] = status }
        if let attempt = event.attempt { attributes["sdkauth.attempt"] = attempt }
        if let outcome = event.outcome { attributes["sdkauth.outcome"] = outcome.rawValue }
        return attributes
    }
}
