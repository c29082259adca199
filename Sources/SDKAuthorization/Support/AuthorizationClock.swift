import Dispatch
import Foundation

/// The source of time for token expiry, waits, deadlines and refresh windows.
///
/// Wall-clock time (``now()``) is only compared with a JWT's `exp`; every wait, deadline and refresh
/// window runs on ``monotonicNow()``, which never jumps when the user or the network sets the
/// system clock, so setting the clock back cannot stretch a 10-second wait.
///
/// Inject a manual clock (`ManualClock` in `SDKAuthorizationTesting`) so tests of 10-second waits
/// run instantly; production code uses ``SystemClock``.
///
/// # Implementation requirements
/// ``monotonicNow()`` never decreases. ``sleep(untilMonotonic:)`` returns once ``monotonicNow()``
/// has reached the deadline, and throws `CancellationError` promptly when the calling task is cancelled.
public protocol AuthorizationClock: Sendable {
    /// The current wall-clock time, for JWT expiry only.
    func now() -> Date
    /// Seconds on a monotonic clock, from an arbitrary origin.
    func monotonicNow() -> TimeInterval
    /// Suspends until ``monotonicNow()`` reaches `deadline`.
    func sleep(untilMonotonic deadline: TimeInterval) async throws
}

/// Real time: `Date()` for wall-clock time, and the system's uptime clock for waits.
public struct SystemClock: AuthorizationClock {
    /// Creates the system clock.
    public init() {}

    public func now() -> Date { Date() }

    public func monotonicNow() -> TimeInterval {
        TimeInterval(DispatchTime.now().uptimeNanoseconds) / 1_000_000_000
    }

    public func sleep(untilMonotonic deadline: TimeInterval) async throws {
        let seconds = deadline - monotonicNow()
        guard seconds > 0 else {
            try Task.checkCancellation()
            return
        }
        // Bounded so that no finite deadline can overflow the conversion.
        let nanoseconds = UInt64(min(seconds, 1e9) * 1_000_000_000)
        try await Task.sleep(nanoseconds: nanoseconds)
    }
}
