import Foundation
import SDKAuthorization

/// Waits for work the provider does not control (the app's signer) no longer than a request's
/// deadline: the work runs in a task of its own, and the wait ends with its result, at the deadline
/// (``RequestError/Code/deadlineExceeded``, and the work is cancelled), or when the waiting task is
/// cancelled, whichever comes first. What makes ``DPoPProvider/endsByDeadline`` true.
struct BoundedWait: Sendable {
    let alarms: Alarms
    let clock: any AuthorizationClock

    func result<T: Sendable>(by deadline: RequestDeadline?, endpoint: EndpointID?,
                             _ work: @escaping @Sendable () async throws(RequestError) -> T) async throws(RequestError) -> T {
        guard let deadline else { return try await work() }
        guard !deadline.hasPassed(on: clock) else { throw .deadlineExceeded(endpoint: endpoint, after: deadline.seconds) }
        let answer = FirstAnswer<T>()
        let task = Task {
            do throws(RequestError) { answer.resolve(.success(try await work())) } catch { answer.resolve(.failure(error)) }
        }
        let alarm = alarms.schedule(at: deadline.uptime) {
            answer.resolve(.failure(.deadlineExceeded(endpoint: endpoint, after: deadline.seconds)))
            task.cancel()
        }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { answer.attach($0) }
        } onCancel: {
            answer.resolve(.failure(.cancelled))
            task.cancel()
        }
        alarms.cancel(alarm)
        return try result.get()
    }
}

/// The first of a work's result, the deadline and a cancellation: resolved once, later ones ignored.
private final class FirstAnswer<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Result<T, RequestError>, Never>?
        var result: Result<T, RequestError>?
        var delivered = false
    }

    private let state = Locked(State())

    func attach(_ continuation: CheckedContinuation<Result<T, RequestError>, Never>) {
        let ready = state.withLock { state -> Result<T, RequestError>? in
            guard let result = state.result else {
                state.continuation = continuation
                return nil
            }
            state.delivered = true
            return result
        }
        if let ready { continuation.resume(returning: ready) }
    }

    func resolve(_ result: Result<T, RequestError>) {
        let continuation = state.withLock { state -> CheckedContinuation<Result<T, RequestError>, Never>? in
            guard state.result == nil else { return nil }
            state.result = result
            guard let continuation = state.continuation, !state.delivered else { return nil }
            state.delivered = true
            state.continuation = nil
            return continuation
        }
        continuation?.resume(returning: result)
    }
}
