import Foundation

/// The source of time for token expiry, waits and backoff.
///
/// Inject a manual clock (`ManualClock` in `SDKAuthorizationTesting`) so tests of 10-second waits
/// run instantly; production code uses ``SystemClock``.
///
/// # Implementation requirements
/// `sleep(until:)` returns once `now()` has reached `deadline`, and throws `CancellationError`
/// promptly when the calling task is cancelled.
public protocol AuthorizationClock: Sendable {
    /// The current wall-clock time.
    func now() -> Date
    /// Suspends until `deadline`.
    func sleep(until deadline: Date) async throws
}

/// Real time: `Date()` and `Task.sleep`.
public struct SystemClock: AuthorizationClock {
    /// Creates the system clock.
    public init() {}

    public func now() -> Date { Date() }

    public func sleep(until deadline: Date) async throws {
        let seconds = deadline.timeIntervalSinceNow
        guard seconds > 0 else { return }
        try await Task.sleep(nanoseconds: UInt64(seconds * 1_000_000_000))
    }
}
