import SDKAuthorization

/// An event observer that keeps every ``AuthorizationEvent``, for assertions.
///
/// ```swift
/// let events = RecordingEventObserver()
/// let authorizer = try RequestAuthorizer(policy: policy, providers: providers, observer: events)
/// // ... send a request the server rejects once ...
/// #expect(events.kinds == [.requestAuthorized, .credentialRejected, .retryScheduled, .requestAuthorized])
/// ```
public final class RecordingEventObserver: AuthorizationEventObserver, Sendable {
    private let recorded = TestingLock<[AuthorizationEvent]>([])

    /// Creates an empty observer.
    public init() {}

    public func observe(_ event: AuthorizationEvent) {
        recorded.withLock { $0.append(event) }
    }

    /// Every event so far, in the order they were observed.
    public var events: [AuthorizationEvent] { recorded.withLock { $0 } }

    /// The kinds of every event so far, in order.
    public var kinds: [AuthorizationEvent.Kind] { events.map(\.kind) }

    /// The events of one kind, in order.
    public func events(_ kind: AuthorizationEvent.Kind) -> [AuthorizationEvent] {
        events.filter { $0.kind == kind }
    }

    /// Forgets the events observed so far.
    public func clear() { recorded.withLock { $0.removeAll() } }
}
