import Foundation

extension RequestAuthorizer {
    /// Runs the request loop (``send(_:endpoint:through:)``) in a task of its own that its deadline
    /// cancels, so a stack that hangs ends at the deadline without the caller's task being
    /// cancelled. The caller's cancellation reaches the request's task. The task starts on the
    /// calling thread where the runtime allows it.
    func sendCancellingAtDeadline(
        _ request: OutgoingRequest,
        endpoint: EndpointID?,
        through stack: @escaping @Sendable (OutgoingRequest) async throws -> ServerResponse
    ) async throws(RequestError) -> ServerResponse {
        // An unstructured task does not inherit cancellation: a cancelled caller sends nothing.
        if Task.isCancelled { throw .cancelled }
        let deadline = RequestDeadline(seconds: options.requestDeadline, from: clock)
        let task = startRequestTask { [self] () async throws -> ServerResponse in
            try await send(request, endpoint: endpoint, deadline: deadline, through: stack, reading: { $0 })
        }
        let alarm = alarms.schedule(at: deadline.uptime) { task.cancel() }
        let result = await withTaskCancellationHandler {
            await task.result
        } onCancel: {
            task.cancel()
        }
        alarms.cancel(alarm)
        let expired = deadline.hasPassed(on: clock)
        switch result {
        case .success(let response):
            return response
        case .failure(let error):
            if let error = error as? RequestError, !(expired && error.code == .cancelled) { throw error }
            guard expired else { throw .cancelled }
            var failure = RequestError.deadlineExceeded(endpoint: endpoint, after: deadline.seconds)
            failure.wasSent = (error as? RequestError)?.wasSent ?? false
            diagnostics.log(.warning, failure.description, endpoint: endpoint, event: RequestError.Code.deadlineExceeded.rawValue)
            throw failure
        }
    }
}

/// Starts `operation` in a task of its own that runs on the calling thread until it first suspends
/// (`Task.immediate` where the runtime has it): a request that never waits never changes threads.
func startRequestTask(_ operation: sending @escaping @isolated(any) () async throws -> ServerResponse) -> Task<ServerResponse, any Error> {
    if #available(macOS 26.0, iOS 26.0, watchOS 26.0, tvOS 26.0, visionOS 26.0, *) {
        return Task.immediate(operation: operation)
    }
    return Task(operation: operation)
}
