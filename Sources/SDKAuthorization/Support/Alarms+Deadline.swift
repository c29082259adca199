import Foundation

extension Alarms {
    /// Runs `work`, a call into code that may not end by a request's deadline by itself (an app's
    /// signer, a provider or transport that does not declare `endsByDeadline`), and waits for it
    /// only until `deadline` or the calling task's cancellation, whichever comes first.
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
    /// - Parameters:
    ///   - deadline: The request's deadline (``AuthorizationContext/deadline``), on this instance's
    ///     clock; `nil` waits until the work answers or the task is cancelled.
    ///   - endpoint: The endpoint the errors name.
    ///   - work: The call.
    /// - Returns: What `work` returned.
    /// - Throws: What `work` threw; ``RequestError/Code/deadlineExceeded`` or
    ///   ``RequestError/Code/cancelled`` when that came first.
    public func untilDeadline<Answer: Sendable>(
        _ deadline: RequestDeadline?,
        endpoint: EndpointID? = nil,
        _ work: @escaping @Sendable () async throws -> Answer
    ) async throws -> Answer {
        let wait = DeadlineWait(work, deadline: deadline, endpoint: endpoint)
        // On the calling thread until it first suspends, where the runtime allows it.
        let task = if #available(macOS 26.0, iOS 26.0, watchOS 26.0, tvOS 26.0, visionOS 26.0, *) {
            Task.immediate { await wait.run() }
        } else {
            Task { await wait.run() }
        }
        // A call that answered without waiting (a token at hand) needs no alarm.
        let alarm = wait.hasEnded ? nil : deadline.map { schedule(at: $0.uptime) { wait.expire() } }
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

    private let slot = Locked(Slot.idle)
    private let work: @Sendable () async throws -> Answer
    private let deadline: RequestDeadline?
    private let endpoint: EndpointID?

    /// The alarm and the work's task hold this one object, so neither needs a context of its own.
    init(_ work: @escaping @Sendable () async throws -> Answer, deadline: RequestDeadline?, endpoint: EndpointID?) {
        self.work = work
        self.deadline = deadline
        self.endpoint = endpoint
    }

    /// Whether the wait has ended (the work answered, the deadline came, or a cancellation).
    var hasEnded: Bool {
        slot.withLock { slot in
            if case .idle = slot { false } else { true }
        }
    }

    /// Runs the work and ends the wait with its answer, unless something ended it first.
    func run() async {
        do {
            end(.success(try await work()))
        } catch {
            end(.failure(error))
        }
    }

    /// The deadline came: ends the wait with ``RequestError/Code/deadlineExceeded``.
    func expire() {
        end(.failure(RequestError.deadlineExceeded(endpoint: endpoint, after: deadline?.seconds ?? 0)))
    }

    func register(_ continuation: UnsafeContinuation<Result<Answer, any Error>, Never>) {
        let ended = slot.withLock { slot -> Result<Answer, any Error>? in
            guard case .ended(let result) = slot else {
                slot = .waiting(continuation)
                return nil
            }
            slot = .resumed
            return result
        }
        if let ended { continuation.resume(returning: ended) }
    }

    func end(_ result: Result<Answer, any Error>) {
        let waiting = slot.withLock { slot -> UnsafeContinuation<Result<Answer, any Error>, Never>? in
            switch slot {
            case .idle:
                slot = .ended(result)
                return nil
            case .waiting(let continuation):
                slot = .resumed
                return continuation
            case .ended, .resumed:
                return nil
            }
        }
        waiting?.resume(returning: result)
    }
}
