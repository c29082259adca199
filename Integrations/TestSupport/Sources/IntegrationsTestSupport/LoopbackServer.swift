import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// A small HTTP/1.1 server on a free loopback port, for the transports' tests (AsyncHTTPClient's,
/// and the tracing transport over URLSession's): it records every request and answers what the
/// test's handler says, or never answers.
public final class LoopbackServer: Sendable {
    /// A request the server received.
    public struct Request: Sendable {
        /// The request's method, e.g. `GET`.
        public let method: String
        /// The request target: path and query.
        public let uri: String
        /// The header fields, in the order received.
        public let headers: [(String, String)]
        /// The whole body.
        public let body: Data

        /// The first field named `name` (case-insensitive).
        public func header(_ name: String) -> String? {
            headers.first { $0.0.caseInsensitiveCompare(name) == .orderedSame }?.1
        }
    }

    /// What the server does with a request.
    public enum Reply: Sendable {
        /// Answer with this status, header fields and body.
        case respond(status: Int, headers: [(String, String)] = [], body: String = "")
        /// Read the request and never answer.
        case hang
    }

    /// Decides the reply to each request.
    public typealias Handler = @Sendable (Request) -> Reply

    private struct State {
        var requests: [Request] = []
        var closedConnections = 0
        var waiters: [(condition: @Sendable (State) -> Bool, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let handler: Handler
    private let state = NIOLockedValueBox(State())
    private let channel = NIOLockedValueBox<(any Channel)?>(nil)

    private init(handler: @escaping Handler) {
        self.handler = handler
    }

    /// Starts a server; stop it with ``stop()``.
    public static func start(_ handler: @escaping Handler) async throws -> LoopbackServer {
        let server = LoopbackServer(handler: handler)
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(RequestHandler(server: server))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        server.channel.withLockedValue { $0 = channel }
        return server
    }

    /// `http://127.0.0.1:<port>`.
    public var baseURL: URL {
        let port = channel.withLockedValue { $0?.localAddress?.port } ?? 0
        return URL(string: "http://127.0.0.1:\(port)")!
    }

    /// Closes the listening socket.
    public func stop() async throws {
        try await channel.withLockedValue { $0 }?.close()
    }

    /// Every request received so far, in order.
    public var requests: [Request] { state.withLockedValue { $0.requests } }
    /// How many connections have been closed so far.
    public var closedConnections: Int { state.withLockedValue { $0.closedConnections } }

    /// Returns once the server has received `count` requests.
    public func waitForRequests(_ count: Int) async {
        await wait { $0.requests.count >= count }
    }

    /// Returns once `count` connections have been closed.
    public func waitForClosedConnections(_ count: Int) async {
        await wait { $0.closedConnections >= count }
    }

    private func wait(_ condition: @escaping @Sendable (State) -> Bool) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLockedValue { state -> Bool in
                if condition(state) { return true }
                state.waiters.append((condition, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    private func update(_ change: (inout State) -> Void) {
        let ready = state.withLockedValue { state -> [CheckedContinuation<Void, Never>] in
            change(&state)
            let snapshot = state
            let ready = state.waiters.filter { $0.condition(snapshot) }.map(\.continuation)
            state.waiters.removeAll { $0.condition(snapshot) }
            return ready
        }
        ready.forEach { $0.resume() }
    }

    fileprivate func received(_ request: Request) -> Reply {
        update { $0.requests.append(request) }
        return handler(request)
    }

    fileprivate func connectionClosed() {
        update { $0.closedConnections += 1 }
    }
}

private final class RequestHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let server: LoopbackServer
    private var head: HTTPRequestHead?
    private var body = ByteBuffer()

    init(server: LoopbackServer) {
        self.server = server
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body.clear()
        case .body(var chunk):
            body.writeBuffer(&chunk)
        case .end:
            guard let head else { return }
            let request = LoopbackServer.Request(
                method: head.method.rawValue, uri: head.uri, headers: head.headers.map { ($0.name, $0.value) },
                body: Data(body.readableBytesView)
            )
            switch server.received(request) {
            case .hang:
                break
            case .respond(let status, let headers, let text):
                var fields = HTTPHeaders(headers)
                fields.replaceOrAdd(name: "Content-Length", value: String(text.utf8.count))
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .init(statusCode: status), headers: fields))), promise: nil)
                context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: text)))), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        server.connectionClosed()
        context.fireChannelInactive()
    }
}
