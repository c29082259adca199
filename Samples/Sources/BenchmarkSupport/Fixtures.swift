import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import SDKAuthorization
import SDKAuthorizationTokenExchange
import SDKAuthorizationSignature
import Synchronization

/// A transport that answers every request at once with `200` and no body: what is left is the
/// framework's own cost.
public struct InstantTransport: HTTPTransport {
    private let response = ServerResponse(statusCode: 200)
    public init() {}
    public func send(_ request: OutgoingRequest) async throws -> ServerResponse { response }
    /// It answers at once, so every send ends by any deadline.
    public var endsByDeadline: Bool { true }
}

/// ``InstantTransport`` as an SDK's own in-memory transport is usually written: it says nothing of
/// deadlines (no `endsByDeadline`), so the client must bound each of its sends itself (the default path).
public struct SilentTransport: HTTPTransport {
    private let response = ServerResponse(statusCode: 200)
    public init() {}
    public func send(_ request: OutgoingRequest) async throws -> ServerResponse { response }
}

/// Drops every diagnostic, so logging does not distort a timing.
public struct QuietSink: DiagnosticsSink {
    public init() {}
    public func record(_ diagnostic: Diagnostic) {}
}

/// The native async provider shape, answering one fixed token.
public struct FixedTokenProvider: AuthorizationProvider {
    public let token: String
    /// Whether it says it ends by the deadline (it answers at once either way): an app's provider
    /// that says nothing is asked in a task of the request's own.
    public let endsByDeadline: Bool
    public init(token: String, endsByDeadline: Bool = false) {
        self.token = token
        self.endsByDeadline = endsByDeadline
    }
    public func credential(for context: AuthorizationContext) async throws -> Credential { .bearer(token) }
}

/// Counts calls from any thread.
public final class CallCounter: Sendable {
    private let value = Mutex(0)
    public init() {}
    public func increment() { value.withLock { $0 += 1 } }
    public var count: Int { value.withLock { $0 } }
}

/// Unsigned JWT-shaped tokens: the framework decodes claims only, it never verifies.
public enum BenchmarkJWT {
    /// `header.payload.signature` with `sub` and an `exp` `lifetime` seconds from now.
    public static func make(subject: String = "user-42", lifetime: TimeInterval = 86_400) -> String {
        let header = #"{"alg":"RS256","typ":"JWT"}"#
        let payload = #"{"sub":"\#(subject)","exp":\#(Int(Date().timeIntervalSince1970 + lifetime))}"#
        return "\(base64URL(header)).\(base64URL(payload)).c2lnbmF0dXJlLWJ5dGVzLWZvci10aGUtYmVuY2htYXJr"
    }

    static func base64URL(_ text: String) -> String {
        Data(text.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

/// The floor of request preparation: a `URLRequest` built by hand, as an SDK without the framework
/// builds one before handing it to `URLSession`. The URL is built once, outside, as the framework
/// builds its endpoint URLs once.
@inline(never)
public func handBuiltRequest(url: URL, method: String, headerName: String, headerValue: String, body: Data?) -> URLRequest {
    var request = URLRequest(url: url)
    request.httpMethod = method
    if let body {
        request.httpBody = body
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    }
    request.setValue(headerValue, forHTTPHeaderField: headerName)
    return request
}
