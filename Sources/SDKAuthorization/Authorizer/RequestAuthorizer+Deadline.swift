import Foundation

extension RequestAuthorizer {
    /// Runs the request loop (``send(_:endpoint:through:)``) through `transport` so that the
    /// request ends by its deadline, without the caller's task being cancelled.
    ///
    /// When the transport and every provider end their waits by the deadline themselves
    /// (``HTTPTransport/endsByDeadline``, ``AuthorizationProvider/endsByDeadline``), the loop runs
    /// in the caller's task. Otherwise it runs in a task of its own that the deadline cancels, so
    /// a provider or transport that hangs ends at the deadline; the caller's cancellation reaches
    /// that task, which starts on the calling thread where the runtime allows it.
    func send(_ request: OutgoingRequest, endpoint: EndpointID?, within transport: any HTTPTransport) async throws(RequestError) -> ServerResponse {
        do {
            return try await sendByDeadline(request, endpoint: endpoint, within: transport)
        } catch {
            throw error.naming(request)
        }
    }

    private func sendByDeadline(_ request: OutgoingRequest, endpoint: EndpointID?, within transport: any HTTPTransport) async throws(RequestError) -> ServerResponse {
        if Task.isCancelled { throw .cancelled }
        let deadline = RequestDeadline(seconds: options.requestDeadline, from: clock)
        if transport.endsByDeadline, providersEndByDeadline {
            let clock = clock
            return try await send(request, endpoint: endpoint, deadline: deadline, through: { request in
                try await transport.send(request, deadline: deadline, clock: clock)
            }, reading: { $0 })
        }
        return try await sendCancelling(at: deadline, request, endpoint: endpoint) { request in
            try await transport.send(request)
        }
    }

    /// Runs the request loop in a task of its own that `deadline` cancels.
    private func sendCancelling(
        at deadline: RequestDeadline,
        _ request: OutgoingRequest,
        endpoint: EndpointID?,
        through stack: @escaping @Sendable (OutgoingRequest) async throws -> ServerResponse
    ) async throws(RequestError) -> ServerResponse {
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
