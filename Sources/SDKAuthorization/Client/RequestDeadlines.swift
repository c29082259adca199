import Foundation

/// The deadlines of one client's requests in flight, and the one task that enforces them.
///
/// Every request of a client has the same time limit, and each deadline is taken under the lock on
/// the monotonic clock, so deadlines arrive in order: a queue, oldest first. One driver task sleeps
/// on the client's clock until the earliest deadline of a request still in flight, ends the
/// requests that have reached theirs, and sleeps again; it ends once no request is left. A request
/// costs a queue slot, not a task and a timer of its own.
///
/// A request is ended at its deadline in one of two ways: its task is cancelled (``attach(_:to:)``),
/// or, while it waits in its caller's task for a provider that honours deadlines, the provider's
/// expiry action runs (``RequestDeadline/onExpiry(_:)``) and ends that wait.
final class RequestDeadlines: Sendable {
    /// One request's place in the queue.
    struct Ticket: Sendable {
        fileprivate let id: UInt64
    }

    private struct Entry {
        /// Monotonic seconds.
        let deadline: TimeInterval
        var task: Task<ServerResponse, any Error>?
        /// What ends the request's wait when it is not in a task of its own.
        var expiryAction: (@Sendable () -> Void)?
        var expired = false
        var finished = false
    }

    private struct State {
        var entries = NumberedQueue<Entry>()
        /// Every entry with a smaller number has expired or finished.
        var nextToExpire: UInt64 = 0
        var driverRunning = false

        /// Drops the finished entries at the front.
        mutating func dropFinished() {
            entries.dropDone { $0.finished }
            nextToExpire = max(nextToExpire, entries.frontNumber)
        }
    }

    private let clock: any AuthorizationClock
    private let state = Locked(State())

    init(clock: any AuthorizationClock) {
        self.clock = clock
    }

    /// Queues a request whose deadline is `seconds` from now, and starts the driver if none runs.
    func begin(seconds: TimeInterval) -> Ticket {
        let (ticket, startDriver) = state.withLock { state -> (Ticket, Bool) in
            let ticket = Ticket(id: state.entries.append(Entry(deadline: clock.monotonicNow() + seconds)))
            guard !state.driverRunning else { return (ticket, false) }
            state.driverRunning = true
            return (ticket, true)
        }
        if startDriver {
            Task.detached { await self.drive() }
        }
        return ticket
    }

    /// Hands the request's task to the driver; cancels it at once when the deadline has passed already.
    func attach(_ task: Task<ServerResponse, any Error>, to ticket: Ticket) {
        let expired = state.withLock { state -> Bool in
            guard let index = state.entries.index(of: ticket.id) else { return false }
            if state.entries[index].expired { return true }
            state.entries[index].task = task
            state.entries[index].expiryAction = nil
            return false
        }
        if expired { task.cancel() }
    }

    /// Runs `action` when the request's deadline passes, or at once when it has passed already;
    /// forgotten once the request ends or a task is attached.
    func onExpiry(of ticket: Ticket, _ action: @escaping @Sendable () -> Void) {
        let expired = state.withLock { state -> Bool in
            guard let index = state.entries.index(of: ticket.id), !state.entries[index].finished else { return false }
            if state.entries[index].expired { return true }
            state.entries[index].expiryAction = action
            return false
        }
        if expired { action() }
    }

    /// Takes the request out of the queue; returns whether its deadline passed while it ran.
    func end(_ ticket: Ticket) -> Bool {
        state.withLock { state -> Bool in
            guard let index = state.entries.index(of: ticket.id) else { return false }
            let expired = state.entries[index].expired
            state.entries[index].finished = true
            state.entries[index].task = nil
            state.entries[index].expiryAction = nil
            state.dropFinished()
            return expired
        }
    }

    /// The driver: sleeps until the earliest deadline of a request in flight, cancels every request
    /// whose deadline has come, and repeats until none is left.
    private func drive() async {
        while true {
            let next = state.withLock { state -> TimeInterval? in
                state.dropFinished()
                var id = state.nextToExpire
                while let index = state.entries.index(of: id), state.entries[index].finished || state.entries[index].expired { id += 1 }
                guard let index = state.entries.index(of: id) else {
                    state.driverRunning = false
                    return nil
                }
                return state.entries[index].deadline
            }
            guard let next else { return }
            try? await clock.sleep(untilMonotonic: next)
            let (tasks, actions) = state.withLock { state -> ([Task<ServerResponse, any Error>], [@Sendable () -> Void]) in
                let now = clock.monotonicNow()
                var tasks: [Task<ServerResponse, any Error>] = []
                var actions: [@Sendable () -> Void] = []
                var id = max(state.nextToExpire, state.entries.frontNumber)
                while let index = state.entries.index(of: id), state.entries[index].deadline <= now {
                    if !state.entries[index].finished, !state.entries[index].expired {
                        state.entries[index].expired = true
                        if let task = state.entries[index].task { tasks.append(task) }
                        if let action = state.entries[index].expiryAction { actions.append(action) }
                        state.entries[index].expiryAction = nil
                    }
                    id += 1
                }
                state.nextToExpire = id
                return (tasks, actions)
            }
            for task in tasks { task.cancel() }
            for action in actions { action() }
        }
    }
}

/// One request's deadline, as a provider that honours deadlines sees it in its
/// ``AuthorizationContext``: while the request waits in its caller's task, the provider registers
/// what ends its wait when the deadline passes.
final class RequestDeadline: Sendable {
    let deadlines: RequestDeadlines
    let ticket: RequestDeadlines.Ticket

    init(deadlines: RequestDeadlines, ticket: RequestDeadlines.Ticket) {
        self.deadlines = deadlines
        self.ticket = ticket
    }

    /// Runs `action` when the deadline passes (at once if it has), unless the request has moved on.
    func onExpiry(_ action: @escaping @Sendable () -> Void) {
        deadlines.onExpiry(of: ticket, action)
    }
}

/// A provider whose waits end when the request's deadline passes (``AuthorizationContext``'s
/// `requestDeadline`), or that never waits: the client asks it in the caller's own task instead
/// of a task per request, so a request that waits for it holds no second task.
protocol AnswersWithinRequestDeadline: AuthorizationProvider {
    /// False for a provider that answers at once: it is given no deadline.
    var mayWait: Bool { get }
}

extension AnswersWithinRequestDeadline {
    var mayWait: Bool { true }
}

/// Starts `operation` in a task of its own that runs on the calling thread until it first suspends
/// (`Task.immediate` where the runtime has it): a request that never waits never changes threads.
func startRequestTask(_ operation: sending @escaping @isolated(any) () async throws -> ServerResponse) -> Task<ServerResponse, any Error> {
    if #available(macOS 26.0, iOS 26.0, watchOS 26.0, tvOS 26.0, visionOS 26.0, *) {
        return Task.immediate(operation: operation)
    }
    return Task(operation: operation)
}
