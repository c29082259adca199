import Foundation
import SDKAuthorization

/// Jittered exponential backoff: how long a request queue waits before it tries again after
/// consecutive failures.
///
/// The n-th consecutive failure waits `minimum × factor^(n-1)`, at most `maximum`, spread by
/// ±`jitter` of itself so that many devices do not retry in step, and never less than `minimum` nor
/// more than `maximum`. The defaults are Braze's: 10 s, factor 3, 300 s, so 10, 30, 90, 270, 300, ...
public struct RetryBackoff: Sendable, Equatable {
    /// The first wait, in seconds (default 10).
    public var minimum: TimeInterval
    /// Each further failure multiplies the wait by this (default 3).
    public var factor: Double
    /// The longest wait, in seconds (default 300).
    public var maximum: TimeInterval
    /// How far a wait is spread, as a fraction of it (default 0.2: ±20 %).
    public var jitter: Double

    /// Creates a backoff; ``validated()`` checks it.
    public init(minimum: TimeInterval = 10, factor: Double = 3, maximum: TimeInterval = 300, jitter: Double = 0.2) {
        self.minimum = minimum
        self.factor = factor
        self.maximum = maximum
        self.jitter = jitter
    }

    /// The wait after `failures` consecutive failures (1 or more), for a `random` draw in `0...1`
    /// (0.5 means no spread).
    public func delay(afterFailures failures: Int, random: Double) -> TimeInterval {
        let exponent = Double(max(failures, 1) - 1)
        let base = min(maximum, minimum * pow(factor, min(exponent, 64)))
        let spread = base * jitter * (min(max(random, 0), 1) * 2 - 1)
        return min(maximum, max(minimum, base + spread))
    }

    /// The backoff, or why it cannot be used: every value finite, `minimum` more than 0 and at most
    /// `maximum`, `maximum` at most one day, `factor` from 1 to 100, `jitter` from 0 to 1.
    public func validated() throws(ConfigurationError) -> RetryBackoff {
        guard minimum.isFinite, minimum > 0 else { throw .invalidValue(key: "backoff minimum", reason: "must be more than 0 seconds") }
        guard maximum.isFinite, maximum >= minimum, maximum <= 86_400 else {
            throw .invalidValue(key: "backoff maximum", reason: "must be from the minimum to 86400 seconds")
        }
        guard factor.isFinite, (1...100).contains(factor) else { throw .invalidValue(key: "backoff factor", reason: "must be from 1 to 100") }
        guard jitter.isFinite, (0...1).contains(jitter) else { throw .invalidValue(key: "backoff jitter", reason: "must be from 0 to 1") }
        return self
    }
}
