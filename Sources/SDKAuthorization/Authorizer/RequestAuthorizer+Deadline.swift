import Foundation

extension RequestAuthorizer {
    /// Runs the request loop (``send(_:endpoint:through:)``) through `transport`, in the caller's
    /// task, so that the request ends by its deadline without the caller's task being cancelled.
    ///
    /// A transport that ends its sends by the deadline itself (``HTTPTransport/endsByDeadline``) is
    /// given the deadline; any other has each send run in a task of its own that the request waits
    /// for only until its deadline or cancellation (``untilDeadline(_:endpoint:_:)``). Providers are
    /// asked the same way (``authorize(_:endpoint:)-(OutgoingRequest,_)``), so only the calls that
    /// need it cost a task, and the request's own frames stay in the caller's task.
    func send(_ request: OutgoingRequest, endpoint: EndpointID?, within transport: any HTTPTransport) async throws(RequestError) -> ServerResponse {
        let deadline = RequestDeadline(seconds: options.requestDeadline, from: clock)
        do throws(RequestError) {
            if Task.isCancelled { throw .cancelled }
            if transport.endsByDeadline {
                let clock = clock
                return try await send(request, endpoint: endpoint, deadline: deadline, through: { request in
                    try await transport.send(request, deadline: deadline, clock: clock)
                }, reading: { $0 })
            }
            return try await send(request, endpoint: endpoint, deadline: deadline, through: { request in
                do {
                    return try await untilDeadline(deadline, endpoint: endpoint) { try await transport.send(request) }
                } catch let error as RequestError where error.code == .deadlineExceeded {
                    diagnostics.log(.warning, "The transport's send did not return by the deadline; \(error.description)",
                                    endpoint: endpoint, event: RequestError.Code.deadlineExceeded.rawValue)
                    throw error
                }
            }, reading: { $0 })
        } catch {
            throw error.naming(request)
        }
    }

    /// Runs `work`, a call into code that may not end by the request's deadline by itself (a
    /// provider or transport that does not declare `endsByDeadline`), so that the request waits for
    /// it only until `deadline` or its own task's cancellation, whichever comes first.
    ///
    /// The work runs in a task of its own, which starts on the calling thread where the runtime
    /// allows it (a call that never waits never changes threads). When the deadline or the
    /// cancellation comes first, that task is cancelled and its late answer ignored, even if it
    /// ignores the cancellation; the caller's task is never cancelled.
    ///
    /// - Throws: What `work` threw; ``RequestError/Code/deadlineExceeded`` or
    ///   ``RequestError/Code/cancelled`` when that came first.
    func untilDeadline<Answer: Sendable>(
        _ deadline: RequestDeadline?,
        endpoint: EndpointID?,
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
        let alarm = wait.hasEnded ? nil : deadline.map { alarms.schedule(at: $0.uptime) { wait.expire() } }
        let result = await withTaskCancellationHandler {
            await withUnsafeContinuation { wait.register($0) }
        } onCancel: {
            wait.end(.failure(RequestError.cancelled))
        }
        if let alarm { alarms.cancel(alarm) }
        // The deadline or a cancellation came first: the work is abandoned.
        if case .failure = result { task.cancel() }
        return try result.get()
    }
}

/// One wait for a call run until the deadline (``RequestAuthorizer/untilDeadline(_:endpoint:_:)``):
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
