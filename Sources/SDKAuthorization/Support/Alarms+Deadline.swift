import Foundation
internal import SDKAuthorizationPrimitives

extension Alarms {
    /// Runs `work`, a call into code that may not end by a request's deadline by itself (an app's
    /// signer, a provider or transport that does not declare `endsByDeadline`), and waits for it
    /// only until `deadline` (the request's ``AuthorizationContext/deadline``, on this instance's
    /// clock; `nil` for none) or the calling task's cancellation, whichever comes first. The errors
    /// name `endpoint`.
    ///
    /// The work runs in a task of its own, which starts on the calling thread where the runtime
    /// allows it (a call that never waits never changes threads, and then sets no alarm). When the
    /// deadline or the cancellation comes first, that task is cancelled and its late answer ignored,
    /// even if it ignores the cancellation; the calling task is never cancelled. This is how the
    /// client bounds such calls, and how a provider of your own that waits on something it does not
    /// control can still declare ``AuthorizationProvider/endsByDeadline``:
    ///
    /// ```swift
    /// let signature = try await alarms.untilDeadline(context.deadline, endpoint: context.endpoint) {
    ///     try await signer.sign(payload)        // the app's code: it may never answer
    /// }
    /// ```
    ///
    /// - Throws: What `work` threw; ``RequestError/Code/deadlineExceeded`` or
    ///   ``RequestError/Code/cancelled`` when that came first.
    public func untilDeadline<Answer: Sendable>(
        _ deadline: RequestDeadline?,
        endpoint: Endpoint.ID? = nil,
        _ work: @escaping @Sendable () async throws -> Answer
    ) async throws -> Answer {
        try await untilDeadline(deadline, endpoint: endpoint, mayBlock: nil, abandoning: nil, work)
    }

    /// Starts a call that answers through a completion handler (an app's signer, a callback API)
    /// and waits for its first answer as ``untilDeadline(_:endpoint:_:)`` waits for its work, with no
    /// task of its own. `start` starts the call, given `answer`: call it with the result, from any
    /// thread, at any time; it returns `false` for an answer that came after the first one, the
    /// deadline or the cancellation, which is ignored.
    ///
    /// ```swift
    /// let signature = try await alarms.firstAnswer(by: RequestDeadline(seconds: 10, from: clock)) { answer in
    ///     signer.sign(payload) { result in
    ///         if !answer(result) { log("the signer answered twice, or too late") }
    ///     }
    /// }
    /// ```
    ///
    /// - Returns: The first answer's value.
    /// - Throws: The first answer's error; ``RequestError/Code/deadlineExceeded`` or
    ///   ``RequestError/Code/cancelled`` when that came first.
    public func firstAnswer<Answer: Sendable>(
        by deadline: RequestDeadline?,
        endpoint: Endpoint.ID? = nil,
        _ start: (_ answer: @escaping @Sendable (Result<Answer, any Error>) -> Bool) -> Void
    ) async throws -> Answer {
        let wait = DeadlineWait<Answer>(nil, deadline: deadline, endpoint: endpoint, abandoning: nil)
        start { result in wait.end(result, byWork: true) }
        if let answered = wait.takeAnswer() {
            return try answered.get()
        }
        let alarm = deadline.map { schedule(at: $0.uptime) { wait.expire() } }
        let result = await withTaskCancellationHandler {
            await withUnsafeContinuation { wait.register($0) }
        } onCancel: {
            wait.end(.failure(RequestError.cancelled))
        }
        if let alarm { cancel(alarm) }
        return try result.get()
    }

    /// ``untilDeadline(_:endpoint:_:)``, for the authorizer's calls into a provider or transport:
    /// a call that `mayBlock` its thread starts on the calling thread only within its
    /// ``CallerThreadBudget`` (and when the callee has not blocked a thread before), and otherwise
    /// runs on threads of its own (``BlockingCallExecutor``), never on the cooperative pool's,
    /// where the runtime allows it. `blockedCallersThread` is told how long a call held the calling
    /// thread when that was ``CallerThreadBudget/blockedThreadThreshold`` or more. A call the wait
    /// gives up on while it still runs is counted in `abandoning` until it ends.
    func untilDeadline<Answer: Sendable>(
        _ deadline: RequestDeadline?,
        endpoint: Endpoint.ID?,
        mayBlock: (budget: CallerThreadBudget, mayStartOnCallersThread: Bool)?,
        abandoning: (calls: AbandonedCalls, callee: AbandonedCalls.Callee)?,
        blockedCallersThread: (TimeInterval) -> Void = { _ in },
        _ work: @escaping @Sendable () async throws -> Answer
    ) async throws -> Answer {
        let wait = DeadlineWait(work, deadline: deadline, endpoint: endpoint, abandoning: abandoning)
        let task: Task<Void, Never>
        if let mayBlock, #available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *) {
            if mayBlock.mayStartOnCallersThread, #available(macOS 26.0, iOS 26.0, watchOS 26.0, tvOS 26.0, visionOS 26.0, *),
               mayBlock.budget.claim() {
                let started = clock.monotonicNow()
                task = Task.immediate { await wait.run() }
                mayBlock.budget.release()
                let held = clock.monotonicNow() - started
                if held >= CallerThreadBudget.blockedThreadThreshold { blockedCallersThread(held) }
            } else {
                task = Task(executorPreference: BlockingCallExecutor.shared) { await wait.run() }
            }
        } else if #available(macOS 26.0, iOS 26.0, watchOS 26.0, tvOS 26.0, visionOS 26.0, *) {
            // On the calling thread until it first suspends.
            task = Task.immediate { await wait.run() }
        } else {
            task = Task { await wait.run() }
        }
        // A call that answered without waiting (a token at hand) needs no alarm and no suspension.
        if let answered = wait.takeAnswer() {
            return try answered.get()
        }
        let alarm = deadline.map { schedule(at: $0.uptime) { wait.expire() } }
        let result = await withTaskCancellationHandler {
            await withUnsafeContinuation { wait.register($0) }
        } onCancel: {
            wait.end(.failure(RequestError.cancelled))
        }
        if let alarm { cancel(alarm) }
        // The deadline or a cancellation came first: the work is abandoned.
        if case .failure = result { task.cancel() }
        return try result.get()
    }
}

/// One wait for a call run until the deadline (``Alarms/untilDeadline(_:endpoint:_:)``):
/// ended once, by the call's answer, the deadline or a cancellation, whichever comes first, before
/// or after the request starts waiting.
private final class DeadlineWait<Answer: Sendable>: Sendable {
    private enum Slot {
        case idle
        /// Unsafe rather than checked: resumed exactly once, by whoever moves the slot out of
        /// `.waiting` under the lock.
        case waiting(UnsafeContinuation<Result<Answer, any Error>, Never>)
        case ended(Result<Answer, any Error>)
        case resumed
    }

    private struct State {
        var slot = Slot.idle
        /// The work, until it starts: then its task alone holds it (and what it captured, such as
        /// a request and its body), so a wait the alarm still holds keeps none of it.
        var work: (@Sendable () async throws -> Answer)?
        /// Whether the work has returned or thrown.
        var workEnded = false
        /// Whether the deadline or a cancellation ended the wait while the work still ran.
        var abandoned = false
    }

    private let state: Locked<State>
    private let deadline: RequestDeadline?
    private let endpoint: Endpoint.ID?
    private let abandoning: (calls: AbandonedCalls, callee: AbandonedCalls.Callee)?

    /// The alarm and the work's task hold this one object, so neither needs a context of its own.
    /// `work` is `nil` for a call that answers through a handler (``Alarms/firstAnswer(by:endpoint:_:)``).
    init(_ work: (@Sendable () async throws -> Answer)?, deadline: RequestDeadline?, endpoint: Endpoint.ID?,
         abandoning: (calls: AbandonedCalls, callee: AbandonedCalls.Callee)?) {
        self.state = Locked(State(work: work))
        self.deadline = deadline
        self.endpoint = endpoint
        self.abandoning = abandoning
    }

    /// Whether the wait has ended (the work answered, the deadline came, or a cancellation).
    var hasEnded: Bool {
        state.withLock { state in
            if case .idle = state.slot { false } else { true }
        }
    }

    /// Runs the work and ends the wait with its answer, unless something ended it first.
    func run() async {
        guard let work = state.withLock({ state in defer { state.work = nil }; return state.work }) else {
            // Abandoned before it started: it never runs, and frees its place at once.
            end(.failure(CancellationError()), byWork: true)
            return
        }
        let result: Result<Answer, any Error>
        do {
            result = .success(try await work())
        } catch {
            result = .failure(error)
        }
        end(result, byWork: true)
    }

    /// The deadline came: ends the wait with ``RequestError/Code/deadlineExceeded``.
    func expire() {
        end(.failure(RequestError.deadlineExceeded(endpoint: endpoint, after: deadline?.seconds ?? 0)))
    }

    /// The work's answer when it has ended already, before anyone waited (taken once: the wait is
    /// then over); `nil` while the work runs.
    func takeAnswer() -> Result<Answer, any Error>? {
        state.withLock { state in
            guard case .ended(let result) = state.slot else { return nil }
            state.slot = .resumed
            return result
        }
    }

    func register(_ continuation: UnsafeContinuation<Result<Answer, any Error>, Never>) {
        let ended = state.withLock { state -> Result<Answer, any Error>? in
            guard case .ended(let result) = state.slot else {
                state.slot = .waiting(continuation)
                return nil
            }
            state.slot = .resumed
            return result
        }
        if let ended { continuation.resume(returning: ended) }
    }

    /// Ends the wait with `result`, unless something ended it first. An end that is not the work's
    /// own, while the work still runs, abandons the work: it is counted in ``abandoning`` until it ends.
    ///
    /// - Returns: Whether `result` ended the wait (`false`: something ended it first).
    @discardableResult
    func end(_ result: Result<Answer, any Error>, byWork: Bool = false) -> Bool {
        var ended = true
        let waiting = state.withLock { state -> UnsafeContinuation<Result<Answer, any Error>, Never>? in
            if byWork {
                state.workEnded = true
                if state.abandoned, let abandoning { abandoning.calls.remove(abandoning.callee) }
            }
            let continuation: UnsafeContinuation<Result<Answer, any Error>, Never>?
            switch state.slot {
            case .idle:
                state.slot = .ended(result)
                continuation = nil
            case .waiting(let waiting):
                state.slot = .resumed
                continuation = waiting
            case .ended, .resumed:
                ended = false
                return nil
            }
            if !byWork, !state.workEnded {
                state.abandoned = true
                state.work = nil
                if let abandoning { abandoning.calls.add(abandoning.callee) }
            }
            return continuation
        }
        waiting?.resume(returning: result)
        return ended
    }
}
