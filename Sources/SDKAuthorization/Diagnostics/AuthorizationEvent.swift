import Foundation

/// Something the framework did for a request or a token, handed to an
/// ``AuthorizationEventObserver`` as it happens: for counters, timers and spans, or for an SDK's
/// own bookkeeping.
///
/// It never holds a credential, a header value, a URL or a body, so its description, `dump` and
/// mirror are safe to log. Its ``Kind`` is a struct rather than an enum, as a ``RequestError``'s
/// code is: later modes add kinds without breaking any observer's `switch`.
///
/// | kind | sent by | fields |
/// | --- | --- | --- |
/// | ``Kind/requestAuthorized`` | ``RequestAuthorizer`` | ``scheme``, ``endpoint``, ``attempt`` |
/// | ``Kind/credentialRejected`` | ``RequestAuthorizer`` | ``scheme``, ``endpoint``, ``status`` |
/// | ``Kind/retryScheduled`` | ``RequestAuthorizer`` | ``scheme``, ``endpoint``, ``status``, ``duration`` (the delay) |
/// | ``Kind/refreshWindowExceeded`` | ``RequestAuthorizer`` | ``scheme``, ``endpoint``, ``status`` |
/// | ``Kind/redirectCredentialDropped`` | ``RequestAuthorizer`` | ``scheme``, ``endpoint``, ``status`` (the redirect's) |
/// | ``Kind/refreshStarted`` | `IDTokenStore` | |
/// | ``Kind/refreshFinished`` | `IDTokenStore` | ``duration``, ``outcome`` |
/// | ``Kind/waitStarted`` | `IDTokenStore` | ``endpoint`` |
/// | ``Kind/waitEnded`` | `IDTokenStore` | ``endpoint``, ``duration``, ``outcome`` |
///
/// Every ``Kind/refreshStarted`` has exactly one ``Kind/refreshFinished`` (when the app sets the
/// token on another thread at the same moment, the two may reach the observer in either order).
/// Every ``Kind/waitStarted`` is followed by exactly one ``Kind/waitEnded``, both sent from the task
/// that waits (through ``AuthorizedHTTPClient``, the caller's own), so a tracer sees them in the
/// request's context.
public struct AuthorizationEvent: Sendable, Equatable, CustomStringConvertible {
    /// What happened, as a stable name an observer can match on.
    public struct Kind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The kind's name.
        public let rawValue: String
        /// Creates a kind.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// A request got the credential its scheme names (or none, for ``AuthorizationScheme/none``
        /// or a provider that omitted it) and may be sent.
        public static let requestAuthorized = Kind(rawValue: "requestAuthorized")
        /// The server answered 401 or 403 to a request that carried its credential; the provider
        /// that issued it is told.
        public static let credentialRejected = Kind(rawValue: "credentialRejected")
        /// After a rejection the request is authorized once more and sent again.
        public static let retryScheduled = Kind(rawValue: "retryScheduled")
        /// A rejection would have refreshed once more than the ``AuthorizationOptions/RefreshWindow`` allows; the request fails.
        public static let refreshWindowExceeded = Kind(rawValue: "refreshWindowExceeded")
        /// A redirect to another origin dropped the request's credential header.
        public static let redirectCredentialDropped = Kind(rawValue: "redirectCredentialDropped")
        /// A token refresh began: the refresh callback was asked for a new token.
        public static let refreshStarted = Kind(rawValue: "refreshStarted")
        /// The refresh ended: a token was set, the callback failed, the user logged out, or the
        /// refresh ran out of time.
        public static let refreshFinished = Kind(rawValue: "refreshFinished")
        /// A request began to wait for a token.
        public static let waitStarted = Kind(rawValue: "waitStarted")
        /// The request's wait ended.
        public static let waitEnded = Kind(rawValue: "waitEnded")

        public var description: String { rawValue }
    }

    /// How a refresh or a wait ended.
    public struct Outcome: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The outcome's name.
        public let rawValue: String
        /// Creates an outcome.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// A token arrived.
        public static let succeeded = Outcome(rawValue: "succeeded")
        /// The refresh callback failed.
        public static let failed = Outcome(rawValue: "failed")
        /// No token arrived in time.
        public static let timedOut = Outcome(rawValue: "timedOut")
        /// The token was cleared (logout, identity change).
        public static let cleared = Outcome(rawValue: "cleared")
        /// The waiting request was cancelled.
        public static let cancelled = Outcome(rawValue: "cancelled")
        /// The waiting request reached its ``RequestDeadline`` first.
        public static let deadlineExceeded = Outcome(rawValue: "deadlineExceeded")

        public var description: String { rawValue }
    }

    /// What happened.
    public let kind: Kind
    /// The scheme concerned, when a request's scheme is.
    public let scheme: AuthorizationScheme?
    /// The catalogue endpoint of the request, when it has one.
    public let endpoint: Endpoint.ID?
    /// The response status: the rejection's, or the redirect's.
    public let status: Int?
    /// 1 for a request's first try, 2 for its retry.
    public let attempt: Int?
    /// Seconds on the clock's monotonic time: how long a wait or a refresh took, or the delay
    /// before a retry.
    public let duration: TimeInterval?
    /// How a refresh or a wait ended.
    public let outcome: Outcome?

    /// Creates an event; the framework makes them, an observer's tests may too.
    public init(
        _ kind: Kind,
        scheme: AuthorizationScheme? = nil,
        endpoint: Endpoint.ID? = nil,
        status: Int? = nil,
        attempt: Int? = nil,
        duration: TimeInterval? = nil,
        outcome: Outcome? = nil
    ) {
        self.kind = kind
        self.scheme = scheme
        self.endpoint = endpoint
        self.status = status
        self.attempt = attempt
        self.duration = duration
        self.outcome = outcome
    }

    /// The kind and the fields that are set, e.g.
    /// `credentialRejected scheme: bearer endpoint: appInboxFetch status: 401`.
    public var description: String {
        var text = kind.rawValue
        if let scheme { text += " scheme: \(scheme)" }
        if let endpoint { text += " endpoint: \(endpoint)" }
        if let status { text += " status: \(status)" }
        if let attempt { text += " attempt: \(attempt)" }
        if let duration { text += " duration: \(duration) s" }
        if let outcome { text += " outcome: \(outcome)" }
        return text
    }
}

/// Receives every ``AuthorizationEvent`` of the ``RequestAuthorizer`` or `IDTokenStore` it is
/// given to (their `observer:` parameter, and ``AuthorizedHTTPClient``'s): the hook that metrics
/// and tracing adapters build on, in the spirit of Alamofire's `EventMonitor`.
///
/// ```swift
/// struct RejectionCounter: AuthorizationEventObserver {
///     let rejections: Counter   // your metrics
///     func observe(_ event: AuthorizationEvent) {
///         if event.kind == .credentialRejected { rejections.increment() }
///     }
/// }
/// let authorizer = try RequestAuthorizer(policy: policy, providers: providers, observer: RejectionCounter(rejections: counter))
/// ```
///
/// With no observer nothing is built: the framework makes no event and pays nothing for the hook.
///
/// # Implementation requirements
/// ``observe(_:)`` is called synchronously on the thread that did the work, possibly from many
/// threads at once; it must return quickly, must not block, and must not call back into the
/// framework.
public protocol AuthorizationEventObserver: Sendable {
    /// Receives one event.
    func observe(_ event: AuthorizationEvent)
}

/// Hands every event to several observers, in order: metrics and tracing together, or theirs and
/// your own.
///
/// ```swift
/// let observer = MultiplexEventObserver([MetricsEventObserver(), TracingEventObserver(), MyCounters()])
/// ```
public struct MultiplexEventObserver: AuthorizationEventObserver {
    /// The observers, in the order they are told.
    public let observers: [any AuthorizationEventObserver]

    /// Creates an observer that tells each of `observers`, in order.
    public init(_ observers: [any AuthorizationEventObserver]) {
        self.observers = observers
    }

    /// Tells every observer.
    public func observe(_ event: AuthorizationEvent) {
        for observer in observers { observer.observe(event) }
    }
}
