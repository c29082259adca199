import Foundation
import SDKAuthorization

/// A transport that sends through ``URLSessionTransport`` and remembers the `Authorization` header
/// of the last request, so a report can show what went over the wire. It shows how an SDK
/// plugs its own stage into ``HTTPTransport``.
public final class ObservedTransport: HTTPTransport, Sendable {
    private let wrapped = URLSessionTransport(timeout: 15)
    private let lock = NSLock()
    nonisolated(unsafe) private var lastAuthorization: String?

    public init() {}

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        lock.withLock { lastAuthorization = request.value(forHeader: "Authorization") }
        return try await wrapped.send(request)
    }

    /// The `Authorization` header of the last request sent (after redirects), or nil.
    public var lastAuthorizationHeader: String? { lock.withLock { lastAuthorization } }
}
