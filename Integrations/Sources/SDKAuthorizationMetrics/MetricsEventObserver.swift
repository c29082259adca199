import CoreMetrics
import Foundation
import SDKAuthorization

/// An `AuthorizationEventObserver` that counts and times the framework's events
/// with swift-metrics.
///
/// ```swift
/// let metrics = MetricsEventObserver()   // MetricsSystem.factory; or MetricsEventObserver(factory: myFactory)
/// let authorizer = try RequestAuthorizer(policy: policy, providers: providers, observer: metrics)
/// ```
///
/// | metric | kind | dimensions | counts |
/// | --- | --- | --- | --- |
/// | `sdkauth_requests_authorized_total` | counter | `scheme` | requests authorized, each attempt |
/// | `sdkauth_credential_rejections_total` | counter | `scheme`, `status` | 401 and 403 to a request that carried its credential |
/// | `sdkauth_retries_total` | counter | `scheme` | retries after a rejection |
/// | `sdkauth_refresh_window_exceeded_total` | counter | `scheme` | rejections the refresh window refused to refresh |
/// | `sdkauth_redirect_credentials_dropped_total` | counter | `scheme` | credentials dropped on a redirect to another origin |
/// | `sdkauth_refreshes_total` | counter | `outcome` | token refreshes, once finished |
/// | `sdkauth_refresh_duration` | timer | `outcome` | how long each refresh took |
/// | `sdkauth_token_waits_total` | counter | `outcome` | requests that waited for a token |
/// | `sdkauth_token_wait_duration` | timer | `outcome` | how long each of them waited |
///
/// `sdkauth` is the default ``prefix``. Outcomes are `succeeded`, `failed`, `timedOut`, `cleared`
/// and `cancelled`. Each metric is made once per set of dimensions and kept, so an event costs a
/// dictionary look-up under a lock and the backend's increment; the metrics are made from the
/// factory when first needed, so bootstrap `MetricsSystem` before the first request when you use
/// the default.
public final class MetricsEventObserver: AuthorizationEventObserver, Sendable {
    /// The first part of every metric's label.
    public let prefix: String
    private let factory: (any MetricsFactory)?
    private let counters = MetricsCache<Counter>()
    private let timers = MetricsCache<CoreMetrics.Timer>()

    /// Creates an observer.
    ///
    /// - Parameters:
    ///   - prefix: The first part of every label (default `sdkauth`).
    ///   - factory: The metrics backend; `nil` (the default) uses `MetricsSystem.factory`.
    public init(prefix: String = "sdkauth", factory: (any MetricsFactory)? = nil) {
        self.prefix = prefix
        self.factory = factory
    }

    /// Counts `event`, and times it when it carries a duration.
    public func observe(_ event: AuthorizationEvent) {
        let scheme = event.scheme?.description ?? "none"
        let outcome = event.outcome?.rawValue ?? "unknown"
        switch event.kind {
        case .requestAuthorized:
            count("requests_authorized_total", [("scheme", scheme)])
        case .credentialRejected:
            count("credential_rejections_total", [("scheme", scheme), ("status", event.status.map(String.init) ?? "none")])
        case .retryScheduled:
            count("retries_total", [("scheme", scheme)])
        case .refreshWindowExceeded:
            count("refresh_window_exceeded_total", [("scheme", scheme)])
        case .redirectCredentialDropped:
            count("redirect_credentials_dropped_total", [("scheme", scheme)])
        case .refreshFinished:
            count("refreshes_total", [("outcome", outcome)])
            time("refresh_duration", [("outcome", outcome)], event.duration)
        case .waitEnded:
            count("token_waits_total", [("outcome", outcome)])
            time("token_wait_duration", [("outcome", outcome)], event.duration)
        default:
            break   // starts are counted when they end; later kinds are not counted yet
        }
    }

    private func count(_ name: String, _ dimensions: [(String, String)]) {
        let label = "\(prefix)_\(name)"
        counters.metric(label, dimensions) {
            if let factory { Counter(label: label, dimensions: dimensions, factory: factory) } else { Counter(label: label, dimensions: dimensions) }
        }.increment()
    }

    private func time(_ name: String, _ dimensions: [(String, String)], _ seconds: Double?) {
        guard let seconds, seconds.isFinite, seconds >= 0 else { return }
        let label = "\(prefix)_\(name)"
        timers.metric(label, dimensions) {
            if let factory {
                CoreMetrics.Timer(label: label, dimensions: dimensions, preferredDisplayUnit: .seconds, factory: factory)
            } else {
                CoreMetrics.Timer(label: label, dimensions: dimensions, preferredDisplayUnit: .seconds)
            }
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
