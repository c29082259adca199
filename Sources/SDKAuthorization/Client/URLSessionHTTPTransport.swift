import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
internal import SDKAuthorizationPrimitives

/// The default ``HTTPTransport``: Foundation's `URLSession` (FoundationNetworking on Linux), with
/// automatic redirects turned off so the request loop decides what a redirect may carry.
///
/// Use your app's own session (certificate pinning, proxies, its delegate) with
/// ``init(session:)``: each request's task gets a delegate of its own that refuses automatic
/// redirects, and your session's delegate still sees everything else.
///
/// The name leaves `URLSessionTransport` to swift-openapi-urlsession.
public final class URLSessionHTTPTransport: HTTPTransport {
    private let session: URLSession
    /// Whether this transport made the session, and so invalidates it.
    private let ownsSession: Bool

    /// Creates a transport over an ephemeral session of its own (no cookies, no cache) with the
    /// given request timeout.
    public init(timeout: TimeInterval = 60) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        session = URLSession(configuration: configuration, delegate: RedirectRefusingDelegate(), delegateQueue: nil)
        ownsSession = true
    }

    /// Creates a transport over `session`, which stays yours: it is not invalidated when the
    /// transport goes away.
    public init(session: URLSession) {
        self.session = session
        ownsSession = false
    }

    deinit {
        if ownsSession { session.finishTasksAndInvalidate() }
    }

    public func send(_ request: OutgoingRequest) async throws -> ServerResponse {
        try await send(request, deadline: nil)
    }

    /// Sends `request` and cancels its data task when `deadline` passes on `clock`, if no response
    /// came first: an alarm on `clock` (``Alarms``), so with a manual clock the send is cancelled
    /// when the clock is moved past it.
    public func send(_ request: OutgoingRequest, deadline: RequestDeadline, clock: any AuthorizationClock) async throws -> ServerResponse {
        try await send(request, deadline: (deadline, Alarms(clock: clock)))
    }

    /// `true`: a send with a deadline cancels its data task when the deadline passes.
    public var endsByDeadline: Bool { true }

    /// Sends `request`; with a deadline, cancels the data task when an alarm at it rings.
    private func send(_ request: OutgoingRequest, deadline: (RequestDeadline, Alarms)?) async throws -> ServerResponse {
        let urlRequest = URLRequest(request)
        let task = TaskBox()
        let alarm = deadline.map { deadline, alarms in (alarms, alarms.schedule(at: deadline.uptime) { task.cancel() }) }
        defer { if let (alarms, alarm) = alarm { alarms.cancel(alarm) } }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<ServerResponse, any Error>) in
                let dataTask = session.dataTask(with: urlRequest) { data, response, error in
                    if let error {
                        continuation.resume(throwing: error)
                    } else if let http = response as? HTTPURLResponse {
                        var headers: [String: String] = [:]
                        for (name, value) in http.allHeaderFields {
                            headers[String(describing: name)] = String(describing: value)
                        }
                        continuation.resume(returning: ServerResponse(statusCode: http.statusCode, headers: headers, body: data ?? Data()))
                    } else {
                        continuation.resume(throwing: URLError(.badServerResponse))
                    }
                }
                // A session that is not ours has a delegate of its own, or none: the task's own
                // delegate keeps it from following redirects.
                if !ownsSession, #available(macOS 12.0, iOS 15.0, tvOS 15.0, watchOS 8.0, *) {
                    dataTask.delegate = RedirectRefusingDelegate()
                }
                task.set(dataTask)
                dataTask.resume()
            }
        } onCancel: {
            task.cancel()
        }
    }
}

extension URLRequest {
    /// The Foundation request for `request`, as ``URLSessionHTTPTransport`` sends it: its method,
    /// URL, header fields and body.
    public init(_ request: OutgoingRequest) {
        self.init(url: request.url)
        httpMethod = request.method
        httpBody = request.body
        // Set once, as a whole: each `setValue(_:forHTTPHeaderField:)` searches and copies the table.
        if !request.headers.isEmpty { allHTTPHeaderFields = request.headers }
    }
}

/// Holds a data task so a cancellation arriving before or after it starts reaches it.
private final class TaskBox: Sendable {
    private struct State {
        var task: URLSessionDataTask?
        var cancelled = false
    }

    private let state = Locked(State())

    func set(_ task: URLSessionDataTask) {
        let cancelled = state.withLock { state -> Bool in
            state.task = task
            return state.cancelled
        }
        if cancelled { task.cancel() }
    }

    func cancel() {
        let task = state.withLock { state -> URLSessionDataTask? in
            state.cancelled = true
            return state.task
        }
        task?.cancel()
    }
}

/// Refuses every automatic redirect; the client follows redirects itself.
private final class RedirectRefusingDelegate: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}
