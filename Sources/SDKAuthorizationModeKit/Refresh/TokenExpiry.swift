import Foundation
import SDKAuthorization

/// When a token stops being fresh, judged on this device's clocks.
///
/// A token whose server gave its lifetime (an OAuth `expires_in`) is made with
/// ``init(lifetime:clock:)`` and expires by both clocks: a wall clock set back does not extend it,
/// and a monotonic clock that stood still while the device slept does not either.
/// `Samples/DPoPMode` judges its tokens so.
///
/// ```swift
/// let expiry = TokenExpiry(lifetime: answer.lifetime - 30, clock: clock)
/// // later, for each request:
/// if expiry.isStale(on: clock, leeway: 0) { /* fetch a new token */ }
/// ```
///
/// `RefreshingTokenProvider` judges a JWT by its `exp` and `iat`, which are on the server's clock.
/// When the device's wall clock agrees with the token as it arrives (it is no earlier than `iat`,
/// give or take 60 seconds, and the token is fresh by it: `exp` at least the leeway away), `exp` is
/// read on the wall clock. When it disagrees (the token arrives already stale, or from the future:
/// the device clock is off, or the token is old), the token's lifetime, `exp - iat`, is counted on
/// the monotonic clock from its arrival instead. So a device clock minutes ahead never makes every
/// refreshed token stale on arrival (a refresh storm) or already expired; at worst a token is used
/// until the server refuses it (a 401 marks it stale). A token without both claims is judged on the
/// wall clock alone.
public struct TokenExpiry: Sendable, Equatable {
    /// How far the device clock may be behind a token's `iat` and still agree with it.
    static let clockTolerance: TimeInterval = 60

    private enum Basis: Sendable, Equatable {
        case wall(Date)
        case monotonic(TimeInterval)
        case both(Date, TimeInterval)
    }

    /// `nil`: the token has no expiry; it never goes stale by time.
    private let basis: Basis?

    /// The expiry of a token whose `exp` is `expiresAt` and `iat` `issuedAt`, arriving when the
    /// wall clock says `wall` and the monotonic clock `monotonic`; `leeway` is how long before its
    /// expiry a token counts as stale.
    init(expiresAt: Date?, issuedAt: Date?, leeway: TimeInterval, arrivedAt wall: Date, monotonic: TimeInterval) {
        guard let expiresAt else {
            basis = nil
            return
        }
        guard let issuedAt, expiresAt.timeIntervalSince1970.isFinite, issuedAt.timeIntervalSince1970.isFinite else {
            basis = .wall(expiresAt)
            return
        }
        let agrees = wall.timeIntervalSince(issuedAt) >= -Self.clockTolerance && expiresAt.timeIntervalSince(wall) >= leeway
        basis = agrees ? .wall(expiresAt) : .monotonic(monotonic + expiresAt.timeIntervalSince(issuedAt))
    }

    /// The expiry of a token that lives `lifetime` seconds from now on `clock`, counted on its wall
    /// clock and its monotonic clock alike: it expires by whichever comes first. A lifetime that is
    /// not a number counts as 0 (it expires as it arrives), never as one that no time reaches.
    public init(lifetime: TimeInterval, clock: any AuthorizationClock) {
        let lifetime = lifetime.isNaN ? 0 : lifetime
        basis = .both(clock.now().addingTimeInterval(lifetime), clock.monotonicNow() + lifetime)
    }

    /// The expiry of `token` (a JWT, when its `exp` is `expiresAt`, brings its `iat` too).
    init(token: String, expiresAt: Date?, leeway: TimeInterval, clock: any AuthorizationClock) {
        let claims = try? JWTClaims(decoding: token)
        let issuedAt = claims?.expiresAt == expiresAt ? claims?.issuedAt : nil
        self.init(expiresAt: expiresAt, issuedAt: issuedAt, leeway: leeway, arrivedAt: clock.now(), monotonic: clock.monotonicNow())
    }

    /// Seconds until the token expires on `clock` (negative once it has); `nil` when it never does.
    public func remaining(on clock: any AuthorizationClock) -> TimeInterval? {
        switch basis {
        case nil: nil
        case .wall(let expiresAt)?: expiresAt.timeIntervalSince(clock.now())
        case .monotonic(let deadline)?: deadline - clock.monotonicNow()
        case .both(let expiresAt, let deadline)?: min(expiresAt.timeIntervalSince(clock.now()), deadline - clock.monotonicNow())
        }
    }

    /// Whether the token expires less than `leeway` seconds from now on `clock`.
    public func isStale(on clock: any AuthorizationClock, leeway: TimeInterval) -> Bool {
        remaining(on: clock).map { $0 < leeway } ?? false
    }
}
