import Synchronization

/// The floor for waiters: the least a "wait until the token is set" can cost. Each waiter is one
/// `UnsafeContinuation` (the kind the framework's single-flight wait uses: no canary allocated per
/// wait) appended to an array under a lock; `set` takes the array and resumes every waiter in
/// arrival order, outside the lock. It leaves out what a request's wait must also do: end at a
/// deadline or a time limit, end alone when its task is cancelled, and start the refresh once.
public final class LockGate: Sendable {
    private struct State {
        var token: String?
        var waiters: [UnsafeContinuation<String, Never>] = []
    }

    private let state = Mutex(State())

    public init() {}

    public func wait() async -> String {
        await withUnsafeContinuation { continuation in
            let token = state.withLock { state -> String? in
                if let token = state.token { return token }
                state.waiters.append(continuation)
                return nil
            }
            if let token { continuation.resume(returning: token) }
        }
    }

    /// The same wait inside a cancellation handler that does nothing: what any wait that must end
    /// when its task is cancelled pays on top (a status record added to the task and removed).
    public func waitCancellable() async -> String {
        await withTaskCancellationHandler {
            await wait()
        } onCancel: {}
    }

    public var waitingCount: Int { state.withLock { $0.waiters.count } }

    public func set(_ token: String) {
        let waiters = state.withLock { state -> [UnsafeContinuation<String, Never>] in
            state.token = token
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: token) }
    }
}

/// The other floor for waiters: the same gate as an actor, as most Swift code would write it.
public actor ActorGate {
    private var token: String?
    private var waiters: [CheckedContinuation<String, Never>] = []

    public init() {}

    public func wait() async -> String {
        if let token { return token }
        return await withCheckedContinuation { waiters.append($0) }
    }

    public var waitingCount: Int { waiters.count }

    public func set(_ token: String) {
        self.token = token
        let waiting = waiters
        waiters = []
        for waiter in waiting { waiter.resume(returning: token) }
    }
}
