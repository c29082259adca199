import Foundation

/// The moment by which a request must be done, on the monotonic clock of the authorizer that
/// started it (``AuthorizationClock/monotonicNow()``): ``AuthorizationOptions/requestDeadline``
/// after the request began.
///
/// Every provider sees it (``AuthorizationContext/deadline``), and a wait that ends at it fails
/// with ``RequestError/Code/deadlineExceeded``. A provider of your own can hand the time left to
/// its own network call:
///
/// ```swift
/// func credential(for context: AuthorizationContext) async throws -> Credential {
///     let seconds = context.deadline?.remaining(on: clock) ?? 30
///     return .bearer(try await session.refreshToken(timeout: seconds))
/// }
/// ```
public struct RequestDeadline: Sendable, Hashable, CustomStringConvertible {
    /// Monotonic seconds at which the request fails with ``RequestError/Code/deadlineExceeded``.
    public let uptime: TimeInterval
    /// The request's whole time limit in seconds, as error messages state it.
    public let seconds: TimeInterval

    /// A deadline `seconds` from now on `clock`'s monotonic time.
    public init(seconds: TimeInterval, from clock: any AuthorizationClock) {
        self.uptime = clock.monotonicNow() + seconds
        self.seconds = seconds
    }

    /// Seconds left on `clock`, never negative.
    public func remaining(on clock: any AuthorizationClock) -> TimeInterval {
        max(0, uptime - clock.monotonicNow())
    }

    /// Whether the deadline has passed on `clock`.
    public func hasPassed(on clock: any AuthorizationClock) -> Bool {
        clock.monotonicNow() >= uptime
    }

    public var description: String { "deadline of \(seconds) s" }
}
