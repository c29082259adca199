import Foundation

extension RequestAuthorizer {
    /// Runs the request loop (``send(_:endpoint:through:)``) through `transport`, in the caller's
    /// task, so that the request ends by its deadline without the caller's task being cancelled.
    /// A transport that ends its sends by the deadline itself (`endsByDeadline`, its
    /// ``HTTPTransport/endsByDeadline`` read once by the client's initializer) is given the deadline;
    /// any other has each send run in a task of its own on the authorizer's alarms, bounded as a
    /// provider's calls are (``AuthorizationOptions/abandonedCallLimit``): only the calls that need
    /// it cost a task, and the request's own frames stay in the caller's task.
    func send(_ request: OutgoingRequest, endpoint: Endpoint.ID?, within transport: any HTTPTransport,
              endsByDeadline: Bool) async throws(RequestError) -> ServerResponse {
        let deadline = RequestDeadline(seconds: options.requestDeadline, from: clock)
        do throws(RequestError) {
            if Task.isCancelled { throw .cancelled }
            if endsByDeadline {
                let clock = clock
                return try await send(request, endpoint: endpoint, deadline: deadline, through: { request in
                    try await transport.send(request, deadline: deadline, clock: clock)
                }, reading: { $0 })
            }
            let callee = AbandonedCalls.Callee.transport(transport)
            return try await send(request, endpoint: endpoint, deadline: deadline, through: { request in
                // Sends that earlier requests gave up on still hold the transport: this one is not added to them.
                if abandonedCalls.isFull(callee) { throw tooManyAbandonedCalls(into: "the transport", endpoint, scheme: nil) }
                do {
                    return try await alarms.untilDeadline(deadline, endpoint: endpoint, mayBlock: nil, abandoning: (abandonedCalls, callee)) {
                        try await transport.send(request)
                    }
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
}
