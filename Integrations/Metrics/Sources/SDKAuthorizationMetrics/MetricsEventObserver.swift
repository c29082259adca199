import CoreMetrics
import Foundation
import SDKAuthorization

/// An `AuthorizationEventObserver` that counts and times the framework's events
/// with swift-metrics.
///
/// ```swift
/// let metrics = MetricsEventObserver()   // the factory in scope; or MetricsEventObserver(factory: myFactory)
/// let authorizer = try RequestAuthorizer(policy: policy, providers: providers, observer: metrics)
/// ```
///
/// | metric | kind | dimensions | counts |
/// | --- | --- | --- | --- |
/// | `sdkauth_requests_authorized_total` | counter | `sdkauth.scheme` | requests authorized, each attempt |
/// | `sdkauth_credential_rejections_total` | counter | `sdkauth.scheme`, `http.response.status_code` | 401 and 403 to a request that carried its credential |
/// | `sdkauth_retries_total` | counter | `sdkauth.scheme` | retries after a rejection |
/// | `sdkauth_refresh_window_exceeded_total` | counter | `sdkauth.scheme` | rejections the refresh window refused to refresh |
/// | `sdkauth_redirect_credentials_dropped_total` | counter | `sdkauth.scheme` | credentials dropped on a redirect to another origin |
/// | `sdkauth_refreshes_total` | counter | `error.type` when it failed | token refreshes, once finished |
/// | `sdkauth_refresh_duration` | timer | `error.type` when it failed | how long each refresh took |
/// | `sdkauth_token_waits_total` | counter | `error.type` when it failed | requests that waited for a token |
/// | `sdkauth_token_wait_duration` | timer | `error.type` when it failed | how long each of them waited |
///
/// `sdkauth` is the default ``prefix``. Dimension names follow the OpenTelemetry semantic
/// conventions where one exists: `http.response.status_code` for the status, `error.type` for how
/// a refresh or wait that did not succeed ended (`failed`, `timedOut`, `cleared`, `cancelled`,
/// `deadlineExceeded`; a success has no `error.type`, as OpenTelemetry's HTTP metrics do). The
/// scheme has no OpenTelemetry name, so it is `sdkauth.scheme` (`bearer`, `apiKey`, ...).
///
/// Timers record nanoseconds, the unit every swift-metrics `Timer` records in, and ask the
/// backend to show seconds (`preferredDisplayUnit: .seconds`).
///
/// The metrics backend is chosen when the observer is made: the `factory:` given, or else
/// `MetricsSystem.factory` at that moment, which is the factory bound by
/// `withMetricsFactory(_:_:)` in the calling task when there is one and the bootstrapped one
/// otherwise. Bootstrap `MetricsSystem` (or enter `withMetricsFactory`) before making the observer.
/// Each metric is made once per set of dimensions, from that factory, and kept, so an event costs
/// a dictionary look-up under a lock and the backend's increment.
public final class MetricsEventObserver: AuthorizationEventObserver, Sendable {
    /// The dimension that names the scheme.
    static let schemeDimension = "sdkauth.scheme"
    /// OpenTelemetry's name of an HTTP response's status code.
    static let statusDimension = "http.response.status_code"
    /// OpenTelemetry's name of the kind of error an operation ended with.
    static let errorTypeDimension = "error.type"

    /// The first part of every metric's label.
    public let prefix: String
    private let factory: any MetricsFactory
    private let counters = MetricsCache<Counter>()
    private let timers = MetricsCache<CoreMetrics.Timer>()

    /// Creates an observer that records into `factory`, or else into the factory in scope now.
    ///
    /// - Parameters:
    ///   - prefix: The first part of every label (default `sdkauth`).
    ///   - factory: The metrics backend; `nil` (the default) takes `MetricsSystem.factory` now: the
    ///     factory `withMetricsFactory(_:_:)` bound in this task, or the bootstrapped one.
    public init(prefix: String = "sdkauth", factory: (any MetricsFactory)? = nil) {
        self.prefix = prefix
        self.factory = factory ?? MetricsSystem.factory
    }

    /// Counts `event`, and times it when it carries a duration.
    public func observe(_ event: AuthorizationEvent) {
        let scheme = [(Self.schemeDimension, event.scheme?.description ?? "none")]
        // OpenTelemetry: `error.type` is set only when the operation did not succeed.
        let outcome = event.outcome.flatMap { $0 == .succeeded ? nil : [(Self.errorTypeDimension, $0.rawValue)] } ?? []
        switch event.kind {
        case .requestAuthorized:
            count("requests_authorized_total", scheme)
        case .credentialRejected:
            count("credential_rejections_total", scheme + [(Self.statusDimension, event.status.map(String.init) ?? "none")])
        case .retryScheduled:
            count("retries_total", scheme)
        case .refreshWindowExceeded:
            count("refresh_window_exceeded_total", scheme)
        case .redirectCredentialDropped:
            count("redirect_credentials_dropped_total", scheme)
        case .refreshFinished:
            count("refreshes_total", outcome)
            time("refresh_duration", outcome, event.duration)
        case .waitEnded:
            count("token_waits_total", outcome)
            time("token_wait_duration", outcome, event.duration)
        default:
            break   // starts are counted when they end; later kinds are not counted yet
        }
    }

    private func count(_ name: String, _ dimensions: [(String, String)]) {
        let label = "\(prefix)_\(name)"
        counters.metric(label, dimensions) {
            Counter(label: label, dimensions: dimensions, factory: factory)
        }.increment()
    }

    private func time(_ name: String, _ dimensions: [(String, String)], _ seconds: Double?) {
        guard let seconds, seconds.isFinite, seconds >= 0 else { return }
        let label = "\(prefix)_\(name)"
        timers.metric(label, dimensions) {
            CoreMetrics.Timer(label: label, dimensions: dimensions, preferredDisplayUnit: .seconds, factory: factory)
        }.recordNanoseconds(Int64(min(seconds, 1e9) * 1_000_000_000))
    }
}

/// The metrics made so far, by label and dimensions.
///
/// `@unchecked Sendable` is sound: `metrics` is private and only read or written while `lock` is
/// held, and the metrics it holds are `Sendable`.
final class MetricsCache<Metric: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var metrics: [String: Metric] = [:]

    func metric(_ label: String, _ dimensions: [(String, String)], make: () -> Metric) -> Metric {
        let key = ([label] + dimensions.map { "\($0.0)=\($0.1)" }).joined(separator: "\u{1F}")
        lock.lock()
        defer { lock.unlock() }
        if let metric = metrics[key] { return metric }
        let metric = make()
        metrics[key] = metric
        return metric
    }
}
