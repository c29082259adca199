import Foundation
internal import SDKAuthorizationPrimitives

/// Actions to run at moments on a clock's monotonic time: every time limit of the framework (a
/// request's deadline, a wait's limit, a refresh's lifetime, a provider call's deadline) is one.
///
/// One driver task per instance sleeps on the clock until the earliest alarm, runs the actions whose
/// time has come (outside the lock, in the order of their times), and sleeps again. An alarm costs a
/// heap entry and its action, not a task or a timer. Once no alarm is left the driver is cancelled,
/// unless the instance keeps it (``init(clock:keepsIdleDriver:)``): then it ends only when it next
/// wakes and finds nothing, so requests that set and cancel one alarm each, one after another,
/// share one driver instead of starting one apiece.
public final class Alarms: Sendable {
    /// One alarm, to cancel it.
    public struct Alarm: Sendable, Hashable {
        fileprivate let id: UInt64
    }

    private struct State {
        var times = MinHeap()
        var actions: [UInt64: @Sendable () -> Void] = [:]
        var nextID: UInt64 = 1
        var driver: Task<Void, Never>?
        var driverNumber = 0
        /// The time the running driver sleeps until, if it sleeps.
        var sleepingUntil: TimeInterval?
    }

    let clock: any AuthorizationClock
    private let keepsIdleDriver: Bool
    private let state = Locked(State())

    /// An instance on `clock`'s monotonic time, with no alarm and no driver task. `keepsIdleDriver`
    /// suits alarms set and cancelled around each request, as a request deadline is.
    public init(clock: any AuthorizationClock, keepsIdleDriver: Bool = false) {
        self.clock = clock
        self.keepsIdleDriver = keepsIdleDriver
    }

    /// Alarms set and not yet run or cancelled, and their times (for leak tests).
    public var heldRecords: Int {
        state.withLock { $0.actions.count + $0.times.count }
    }

    /// Runs `action` once `clock.monotonicNow()` reaches `uptime` (soon, if it has already), unless
    /// the alarm is cancelled first.
    public func schedule(at uptime: TimeInterval, _ action: @escaping @Sendable () -> Void) -> Alarm {
        state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            state.actions[id] = action
            state.times.insert(uptime, id)
            // A driver that sleeps until a later time is replaced by one that wakes for this alarm.
            if state.driver == nil || (state.sleepingUntil.map { uptime < $0 } ?? false) {
                state.driver?.cancel()
                state.driverNumber += 1
                let number = state.driverNumber
                state.sleepingUntil = nil
                state.driver = Task.detached { await self.drive(number) }
            }
            return Alarm(id: id)
        }
    }

    /// Forgets `alarm`; its action will not run (it may be running already). Once no alarm is left
    /// the times of cancelled ones are dropped at once, and the driver is cancelled unless kept.
    public func cancel(_ alarm: Alarm) {
        state.withLock { state in
            guard state.actions.removeValue(forKey: alarm.id) != nil, state.actions.isEmpty else { return }
            state.times.removeAll(keepingCapacity: state.times.count <= 1_024)
            guard !keepsIdleDriver else { return }
            state.driver?.cancel()
            state.driver = nil
            state.sleepingUntil = nil
        }
    }

    private func drive(_ number: Int) async {
        while true {
            let next = state.withLock { state -> TimeInterval? in
                guard state.driverNumber == number else { return nil }
                // Times of cancelled alarms are dropped as they come to the top.
                while let (_, id) = state.times.peek(), state.actions[id] == nil { state.times.removeMinimum() }
                guard let (time, _) = state.times.peek() else {
                    state.driver = nil
                    state.sleepingUntil = nil
                    return nil
                }
                state.sleepingUntil = time
                return time
            }
            guard let next else { return }
            do {
                try await clock.sleep(untilMonotonic: next)
            } catch {
                return
            }
            let due = state.withLock { state -> [@Sendable () -> Void] in
                guard state.driverNumber == number else { return [] }
                state.sleepingUntil = nil
                let now = clock.monotonicNow()
                var due: [@Sendable () -> Void] = []
                while let (time, id) = state.times.peek(), time <= now {
                    state.times.removeMinimum()
                    if let action = state.actions.removeValue(forKey: id) { due.append(action) }
                }
                return due
            }
            for action in due { action() }
        }
    }
}

/// A binary min-heap of (monotonic seconds, ID), for ``Alarms``.
struct MinHeap {
    private var items: [(time: TimeInterval, id: UInt64)] = []

    var isEmpty: Bool { items.isEmpty }
    var count: Int { items.count }

    /// The earliest entry.
    func peek() -> (TimeInterval, UInt64)? { items.first.map { ($0.time, $0.id) } }

    mutating func removeAll(keepingCapacity: Bool = false) { items.removeAll(keepingCapacity: keepingCapacity) }

    /// Earlier first; of two at the same time, the one set first.
    private func precedes(_ lhs: Int, _ rhs: Int) -> Bool {
        items[lhs].time < items[rhs].time || (items[lhs].time == items[rhs].time && items[lhs].id < items[rhs].id)
    }

    mutating func insert(_ time: TimeInterval, _ id: UInt64) {
        items.append((time, id))
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard precedes(child, parent) else { break }
            items.swapAt(child, parent)
            child = parent
        }
    }

    mutating func removeMinimum() {
        guard !items.isEmpty else { return }
        items.swapAt(0, items.count - 1)
        items.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < items.count, precedes(left, smallest) { smallest = left }
            if right < items.count, precedes(right, smallest) { smallest = right }
            guard smallest != parent else { return }
            items.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
