import Foundation
import SDKAuthorization

/// A transport that records every request (headers and body) and answers with whatever the test
/// scripts: any status, body or transport error.
///
/// ```swift
/// let transport = RecordingTransport()
/// transport.enqueue(.response(ServerResponse(statusCode: 401)))   // first request
/// // later requests get the default answer: 200 with `{}`
/// ```
public final class RecordingTransport: HTTPTransport, Sendable {
    /// One scripted answer.
    public enum Answer: Sendable {
        /// Answer with this response.
        case response(ServerResponse)
        /// Fail with this transport error.
        case failure(any Error & Sendable)
    }

    /// Computes the answer for a request that found no scripted answer queued.
    public typealias Responder = @Sendable (OutgoingRequest) async throws -> ServerResponse

    private struct State {
        var requests: [OutgoingRequest] = []
        var queued: [Answer] = []
    }

    private let state = TestingLock(State())
    private let responder: Responder

    /// Creates a transport whose default answer comes from `responder` (default: 200 with `{}`).
    public init(responder: @escaping Responder = { _ in ServerResponse(statusCode: 200, body: Data("{}".utf8)) }) {
        self.responder = responder
    }

    /// Creates a transport that always answers `statusCode` with `body`.
    public convenience init(statusCode: Int, body: String = "{}", headers: [String: String] = [:]) {
        self.init { _ in ServerResponse(statusCode: statusCode, headers: headers, body: Data(body.utf8)) }
    }

    /// Queues answers for the next requests, in order, before the default answer applies again.
    public func enqueue(_ answers: Answer...) {
        state.withLock { $0.queued.append(contentsOf: answers) }
    }

    /// Every request sent so far, in order.
    public var requests: [OutgoingRequest] { state.withLock { $0.requests } }

    /// Forgets the recorded requests.
    public func clear() { state.withLock { $0.requests.removeAll() } }

    public func send(_ request: OutgoingRequest) async throws -> ServerResponse {
        let answer = state.withLock { state -> Answer? in
            state.requests.append(request)
            return state.queued.isEmpty ? nil : state.queued.removeFirst()
        }
        switch answer {
        case .response(let response)?: return response
        case .failure(let error)?: throw error
        case nil: return try await responder(request)
        }
    }
}
