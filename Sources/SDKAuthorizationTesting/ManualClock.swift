import Foundation
import SDKAuthorization

/// A clock that moves only when a test says so, for testing waits, deadlines and backoff without
/// sleeping.
///
/// ``advance(by:)`` moves wall-clock and monotonic time together, as time passing does;
/// ``setWallClock(to:)`` moves only the wall clock, as a user or the network setting the system
/// clock does, so a test can show that waits do not follow it.
///
/// ```swift
/// let clock = ManualClock()
/// async let result = client.send(.appInboxFetch)     // waits on the clock
/// await clock.waitForSleepers(count: 1)
/// clock.advance(by: 10)                               // the wait times out, instantly
/// ```
public final class ManualClock: AuthorizationClock, Sendable {
    private struct Sleeper {
        /// Monotonic seconds.
        let deadline: TimeInterval
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now: Date
        var uptime: TimeInterval = 1_000
        var sleepers: [UUID: Sleeper] = [:]
        var cancelledBeforeRegistering: Set<UUID> = []
        var sleeperWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state: TestingLock<State>

    /// Creates a clock reading `now` (default: 2026-01-01 00:00:00 UTC).
    public init(now: Date = Date(timeIntervalSince1970: 1_767_225_600)) {
        state = TestingLock(State(now: now))
    }

    public func now() -> Date { state.withLock { $0.now } }

    public func monotonicNow() -> TimeInterval { state.withLock { $0.uptime } }

    /// Sets the wall clock only (a user changing the system time); monotonic time and sleepers do not move.
    public func setWallClock(to date: Date) {
        state.withLock { $0.now = date }
    }

    /// How many tasks are sleeping on this clock now.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    public func sleep(untilMonotonic deadline: TimeInterval) async throws {
        try Task.checkCancellation()
        let id = UUID()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Outcome { case slept, cancelled, registered([CheckedContinuation<Void, Never>]) }
                let outcome = state.withLock { state -> Outcome in
                    if state.cancelledBeforeRegistering.remove(id) != nil { return .cancelled }
                    if deadline <= state.uptime { return .slept }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    let count = state.sleepers.count
                    let ready = state.sleeperWaiters.filter { $0.count <= count }.map(\.continuation)
                    state.sleeperWaiters.removeAll { $0.count <= count }
                    return .registered(ready)
                }
                switch outcome {
                case .slept: continuation.resume()
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .registered(let ready): ready.forEach { $0.resume() }
                }
            }
        } onCancel: {
            let sleeper = state.withLock { state -> Sleeper? in
                if let sleeper = state.sleepers.removeValue(forKey: id) { return sleeper }
                state.cancelledBeforeRegistering.insert(id)
                return nil
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves the clock forward and wakes every sleeper whose deadline has come, earliest first.
    public func advance(by seconds: TimeInterval) {
        let due = state.withLock { state -> [Sleeper] in
            state.now = state.now.addingTimeInterval(seconds)
            state.uptime += seconds
            let uptime = state.uptime
            let due = state.sleepers.filter { $0.value.deadline <= uptime }
            for id in due.keys { state.sleepers[id] = nil }
            return due.values.sorted { $0.deadline < $1.deadline }
        }
        due.forEach { $0.continuation.resume() }
    }

    /// Returns once at least `count` tasks are sleeping on this clock.
    public func waitForSleepers(count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.sleepers.count >= count { return true }
                state.sleeperWaiters.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }
}
