import Foundation
import SDKAuthorization
import Synchronization

/// A transport that sends through ``URLSessionHTTPTransport`` and remembers the `Authorization` header
/// of the last request, so a report can show what went over the wire. It shows how an SDK
/// plugs its own stage into ``HTTPTransport``.
public final class ObservedTransport: HTTPTransport, Sendable {
    private let wrapped = URLSessionHTTPTransport(timeout: 15)
    private let lastRequest = Mutex<OutgoingRequest?>(nil)

    public init() {}

    public func send(_ request: OutgoingRequest) async throws -> ServerResponse {
        lastRequest.withLock { $0 = request }
        return try await wrapped.send(request)
    }

    /// The `Authorization` header of the last request sent (after redirects), or nil.
    public var lastAuthorizationHeader: String? { lastHeader("Authorization") }

    /// The value of header `name` in the last request sent (after redirects), or nil.
    public func lastHeader(_ name: String) -> String? { lastRequest.withLock { $0?.value(forHeader: name) } }
}
