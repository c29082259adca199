import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import SDKAuthorization

/// An `HTTPTransport` over AsyncHTTPClient, for server-side SDKs: give it to an
/// `AuthorizedHTTPClient` instead of the URLSession one.
///
/// ```swift
/// let transport = AsyncHTTPClientHTTPTransport(timeout: .seconds(30))
/// let client = try AuthorizedHTTPClient(configuration: configuration, provider: provider, transport: transport)
/// let inbox = try await client.send(.appInboxFetch, body: body)
/// ```
///
/// ## Redirects are the client's, not AsyncHTTPClient's
///
/// The transport returns every 3xx as it is. `AuthorizedHTTPClient` (the framework's one request
/// loop, `RequestAuthorizer.send(_:endpoint:through:reading:)`) follows redirects itself: on a hop
/// to another origin it drops the credential's header field and every caller header that is not
/// safe to forward (an `X-Api-Key`, anything the options name), refuses to forward a body, stops
/// counting a later 401 against the credential, and tells the observer. An `HTTPClient` that
/// follows redirects itself would send the next hop before the loop sees the 3xx: it removes only
/// `Authorization`, `Cookie`, `Proxy-Authorization` and `Origin` on a hop to another origin, and the
/// loop's rules would not run at all.
///
/// So the client must be configured with `redirectConfiguration: .disallow`. The default is a
/// process-wide client made that way on first use (AsyncHTTPClient's default event loop group, the
/// configuration of `HTTPClient.shared` otherwise), which is never shut down. `HTTPClient.shared`
/// itself follows redirects, and a redirect configuration cannot be set per request: a borrowed
/// client that follows one anyway is detected from the response's history, and the send throws
/// rather than return the followed response.
///
/// ## Lifetime
///
/// A client given to ``init(client:timeout:maximumResponseBodyBytes:)`` is borrowed: the
/// transport never shuts it down, and its owner shuts it down after the last request.
///
/// ## Time limits
///
/// Each attempt has at most ``timeout``; a send given a deadline (the client's
/// `AuthorizationOptions.requestDeadline`) has at most the time left before it. A cancelled task
/// ends the request at once, closing its connection, and throws `CancellationError`. A response
/// body longer than ``maximumResponseBodyBytes`` fails the attempt rather than filling memory.
public final class AsyncHTTPClientHTTPTransport: HTTPTransport, Sendable {
    /// How long one attempt may take, from connecting to the last byte of the body.
    public let timeout: TimeAmount
    /// The longest response body read, in bytes.
    public let maximumResponseBodyBytes: Int
    private let client: HTTPClient

    /// Creates a transport over `client`, or over a shared client that never follows redirects.
    ///
    /// - Parameters:
    ///   - client: The client that sends requests, borrowed: configured with
    ///     `redirectConfiguration: .disallow`, and shut down by its owner. `nil` (the default) is a
    ///     process-wide client made so on first use, never shut down.
    ///   - timeout: How long one attempt may take (default 60 seconds, the default request
    ///     deadline); kept between 1 millisecond and 24 hours.
    ///   - maximumResponseBodyBytes: The longest response body read (default 10 MiB).
    public init(client: HTTPClient? = nil, timeout: TimeAmount = .seconds(60), maximumResponseBodyBytes: Int = 10 << 20) {
        self.client = client ?? sharedClientWithoutRedirects
        self.timeout = min(max(timeout, .milliseconds(1)), .hours(24))
        self.maximumResponseBodyBytes = max(0, maximumResponseBodyBytes)
    }

    /// Sends `request` and reads the whole response; a 3xx is returned as it is.
    ///
    /// - Throws: `CancellationError` when the task is cancelled; AsyncHTTPClient's `HTTPClientError`
    ///   for a connection failure, a timeout or a body over the limit; an error saying so when the
    ///   client followed a redirect itself.
    public func send(_ request: OutgoingRequest) async throws -> ServerResponse {
        try await send(request, within: timeout)
    }

    /// Sends `request` with at most the time left before `deadline` (and at most ``timeout``):
    /// AsyncHTTPClient ends the request when that runs out. The time left is read on `clock` when
    /// the send starts and then runs on AsyncHTTPClient's own (monotonic) time.
    public func send(_ request: OutgoingRequest, deadline: RequestDeadline, clock: any AuthorizationClock) async throws -> ServerResponse {
        let seconds = deadline.remaining(on: clock)
        let left: TimeAmount = seconds.isFinite ? .nanoseconds(Int64(max(0, min(seconds, 86_400)) * 1_000_000_000)) : timeout
        return try await send(request, within: min(timeout, left))
    }

    /// `true`: a send with a deadline is given AsyncHTTPClient's own time limit.
    public var endsByDeadline: Bool { true }

    private func send(_ request: OutgoingRequest, within time: TimeAmount) async throws -> ServerResponse {
        var outgoing = HTTPClientRequest(url: request.url.absoluteString)
        outgoing.method = HTTPMethod(rawValue: request.method)
        for (name, value) in request.headers { outgoing.headers.add(name: name, value: value) }
        if let body = request.body { outgoing.body = .bytes(ByteBuffer(bytes: body)) }
        do {
            let response = try await client.execute(outgoing, timeout: time)
            guard response.history.count <= 1 else { throw RedirectFollowedByClient(hops: response.history.count - 1) }
            let body = try await response.body.collect(upTo: maximumResponseBodyBytes)
            var headers: [String: String] = [:]
            for (name, value) in response.headers {
                headers[name] = headers[name].map { "\($0), \(value)" } ?? value
            }
            return ServerResponse(statusCode: Int(response.status.code), headers: headers, body: Data(body.readableBytesView))
        } catch {
            if Task.isCancelled { throw CancellationError() }
            throw error
        }
    }
}

/// The default client: configured as `HTTPClient.shared` is, but never following a redirect.
/// A global, so it is made once, on first use, and never released (nor shut down).
private let sharedClientWithoutRedirects: HTTPClient = {
    var configuration = HTTPClient.Configuration.singletonConfiguration
    configuration.redirectConfiguration = .disallow
    return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
}()

/// The `HTTPClient` followed a redirect itself, which bypasses the request loop's rules for
/// redirects; the response is not returned.
struct RedirectFollowedByClient: Error, CustomStringConvertible, LocalizedError {
    let hops: Int

    var description: String {
        "The HTTPClient followed \(hops) redirect(s) itself, bypassing the credential rules of the request loop; "
            + "give AsyncHTTPClientHTTPTransport a client configured with redirectConfiguration: .disallow, or none for its default"
    }

    var errorDescription: String? { description }
}
