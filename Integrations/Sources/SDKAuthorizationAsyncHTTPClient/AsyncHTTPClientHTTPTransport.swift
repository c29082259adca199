import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import SDKAuthorization

/// An `HTTPTransport` over AsyncHTTPClient, for server-side SDKs: give it to an
/// `AuthorizedHTTPClient` instead of the URLSession one.
///
/// ```swift
/// let transport = AsyncHTTPClientHTTPTransport()
/// let client = AuthorizedHTTPClient(authorizer: authorizer, transport: transport)
/// let response = try await client.send(.trackEvents, body: body)
/// try await transport.shutdown()
/// ```
///
/// The transport owns its `HTTPClient` and configures it never to follow a redirect: the
/// `AuthorizedHTTPClient` follows redirects itself so that it can drop the
/// credential on a hop to another origin. Call ``shutdown()`` when you are done with it: like any
/// `HTTPClient`, it must be shut down before it is released (AsyncHTTPClient asserts it in debug
/// builds).
///
/// Each attempt has at most ``timeout`` seconds; a cancelled task (the client cancels the sending
/// task when `AuthorizationOptions.requestDeadline` passes) ends the request at
/// once, closing its connection, and throws `CancellationError`. A response body longer than
/// ``maximumResponseBodyBytes`` fails the attempt rather than filling memory.
public final class AsyncHTTPClientHTTPTransport: HTTPTransport, Sendable {
    /// Seconds one attempt may take, from connecting to the last byte of the body.
    public let timeout: TimeInterval
    /// The longest response body read, in bytes.
    public let maximumResponseBodyBytes: Int
    private let client: HTTPClient

    /// Creates a transport with its own `HTTPClient`.
    ///
    /// - Parameters:
    ///   - configuration: The client's configuration (TLS, proxy, pool, connect timeout); its
    ///     `redirectConfiguration` is replaced by `.disallow`.
    ///   - eventLoopGroup: Where the client runs; default AsyncHTTPClient's shared group.
    ///   - timeout: Seconds one attempt may take (default 60, the default request deadline).
    ///   - maximumResponseBodyBytes: The longest response body read (default 10 MiB).
    public init(
        configuration: HTTPClient.Configuration = HTTPClient.Configuration(),
        eventLoopGroup: any EventLoopGroup = HTTPClient.defaultEventLoopGroup,
        timeout: TimeInterval = 60,
        maximumResponseBodyBytes: Int = 10 << 20
    ) {
        var configuration = configuration
        configuration.redirectConfiguration = .disallow
        self.client = HTTPClient(eventLoopGroup: eventLoopGroup, configuration: configuration)
        self.timeout = timeout.isFinite ? min(max(timeout, 0.001), 86_400) : 86_400
        self.maximumResponseBodyBytes = max(0, maximumResponseBodyBytes)
    }

    /// Sends `request` and reads the whole response; a 3xx is returned as it is.
    ///
    /// - Throws: `CancellationError` when the task is cancelled; AsyncHTTPClient's `HTTPClientError`
    ///   for a connection failure, a timeout or a body over the limit.
    public func send(_ request: OutgoingRequest) async throws -> ServerResponse {
        try await send(request, seconds: timeout)
    }

    /// Sends `request` with at most the time left before `deadline` (and at most ``timeout``):
    /// AsyncHTTPClient ends the request when that runs out. The time left is read on `clock` when
    /// the send starts and then runs on AsyncHTTPClient's own (system) time.
    public func send(_ request: OutgoingRequest, deadline: RequestDeadline, clock: any AuthorizationClock) async throws -> ServerResponse {
        try await send(request, seconds: min(timeout, deadline.remaining(on: clock)))
    }

    /// `true`: a send with a deadline is given AsyncHTTPClient's own time limit.
    public var endsByDeadline: Bool { true }

    private func send(_ request: OutgoingRequest, seconds: TimeInterval) async throws -> ServerResponse {
        var outgoing = HTTPClientRequest(url: request.url.absoluteString)
        outgoing.method = HTTPMethod(rawValue: request.method)
        for (name, value) in request.headers { outgoing.headers.add(name: name, value: value) }
        if let body = request.body { outgoing.body = .bytes(ByteBuffer(bytes: body)) }
        do {
            let response = try await client.execute(outgoing, timeout: .nanoseconds(Int64(seconds * 1_000_000_000)))
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

    /// Shuts the transport's `HTTPClient` down; requests sent afterwards fail.
    public func shutdown() async throws {
        try await client.shutdown()
    }
}
