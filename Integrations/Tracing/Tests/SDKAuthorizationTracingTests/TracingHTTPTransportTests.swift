import Foundation
import InMemoryTracing
import IntegrationsTestSupport
import SDKAuthorization
import SDKAuthorizationTesting
import SDKAuthorizationTracing
import Testing
import Tracing

/// A tracer for tests: spans as `InMemoryTracer` keeps them, with W3C-shaped IDs (32 and 16
/// lowercase hex digits), and a context injected as a W3C `traceparent` header field.
struct W3CTestTracer: Tracer {
    let spans = InMemoryTracer(idGenerator: .init(
        nextTraceID: { (0..<2).map { _ in String(format: "%016llx", UInt64.random(in: 1...UInt64.max)) }.joined() },
        nextSpanID: { String(format: "%016llx", UInt64.random(in: 1...UInt64.max)) }
    ))

    func startSpan<Instant: TracerInstant>(
        _ operationName: String, context: @autoclosure () -> ServiceContext, ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant, function: String, file fileID: String, line: UInt
    ) -> InMemorySpan {
        spans.startSpan(operationName, context: context(), ofKind: kind, at: instant(), function: function, file: fileID, line: line)
    }

    func activeSpan(identifiedBy context: ServiceContext) -> InMemorySpan? { spans.activeSpan(identifiedBy: context) }
    func forceFlush() {}

    func inject<Carrier, Inject: Injector>(_ context: ServiceContext, into carrier: inout Carrier, using injector: Inject) where Carrier == Inject.Carrier {
        guard let span = context.inMemorySpanContext else { return }
        injector.inject("00-\(span.traceID)-\(span.spanID)-01", forKey: "traceparent", into: &carrier)
    }

    func extract<Carrier, Extract: Extractor>(_ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract) where Carrier == Extract.Carrier {}
}

/// `00-<32 hex>-<16 hex>-<2 hex>`, lowercase, as W3C Trace Context version 00 writes it.
func isW3CTraceparent(_ value: String?) -> Bool {
    guard let parts = value?.split(separator: "-", omittingEmptySubsequences: false), parts.count == 4 else { return false }
    let hex = Set("0123456789abcdef")
    return parts[0] == "00" && zip(parts, [2, 32, 16, 2]).allSatisfy { part, count in part.count == count && part.allSatisfy(hex.contains) }
}

@Suite("Tracing transport", .timeLimit(.minutes(3)))
struct TracingHTTPTransportTests {
    let tracer = W3CTestTracer()

    /// Runs `body` with a loopback server, and always stops it.
    func withServer(_ reply: @escaping LoopbackServer.Handler, _ body: (LoopbackServer) async throws -> Void) async throws {
        let server = try await LoopbackServer.start(reply)
        do {
            try await body(server)
        } catch {
            try await server.stop()
            throw error
        }
        try await server.stop()
    }

    @Test func aRequestSentOverURLSessionCarriesAW3CTraceparentOfItsClientSpanUnderTheCallersSpan() async throws {
        try await withServer({ _ in .respond(status: 201, body: "{}") }) { server in
            let transport = TracingHTTPTransport(URLSessionHTTPTransport(timeout: 10), tracer: tracer)
            let parent = tracer.startSpan("sync inbox")
            let url = URL(string: server.baseURL.absoluteString + "/inbox?token=secret-value")!
            let response = try await ServiceContext.withValue(parent.context) {
                try await transport.send(OutgoingRequest(method: "POST", url: url, headers: ["Authorization": "Bearer abc.def"], body: Data("{}".utf8)))
            }
            parent.end()
            #expect(response.statusCode == 201)

            let seen = try #require(server.requests.first)
            let traceparent = seen.header("traceparent")
            #expect(isW3CTraceparent(traceparent), "traceparent: \(traceparent ?? "none")")
            #expect(seen.header("Authorization") == "Bearer abc.def")

            let span = try #require(tracer.spans.finishedSpans.first { $0.kind == .client })
            #expect(span.operationName == "POST")
            #expect(span.traceID == parent.context.inMemorySpanContext?.traceID)
            #expect(span.parentSpanID == parent.context.inMemorySpanContext?.spanID)
            #expect(traceparent == "00-\(span.traceID)-\(span.spanID)-01")
            #expect(span.attributes["http.request.method"]?.toSpanAttribute() == "POST")
            #expect(span.attributes["url.full"]?.toSpanAttribute() == "\(server.baseURL.absoluteString)/inbox".toSpanAttribute())
            #expect(span.attributes["server.address"]?.toSpanAttribute() == "127.0.0.1")
            #expect(span.attributes["server.port"]?.toSpanAttribute() == (server.baseURL.port ?? 0).toSpanAttribute())
            #expect(span.attributes["http.response.status_code"]?.toSpanAttribute() == 201)
            #expect(span.attributes["error.type"] == nil)
            #expect(span.status == nil)
            // Neither the query nor a header value is an attribute.
            var texts = ""
            span.attributes.forEach { name, value in texts += "\(name)=\(value);" }
            #expect(texts.contains("url.full"))
            #expect(!texts.contains("secret-value") && !texts.contains("abc.def"))
        }
    }

    @Test func withoutATracerParameterTheTracerBoundWithWithTracerInjectsAndRecords() async throws {
        try await withServer({ _ in .respond(status: 503) }) { server in
            let transport = TracingHTTPTransport(URLSessionHTTPTransport(timeout: 10))
            let response = try await withTracer(tracer) {
                try await transport.send(OutgoingRequest(method: "GET", url: server.baseURL.appendingPathComponent("status")))
            }
            #expect(response.statusCode == 503)
            #expect(isW3CTraceparent(server.requests.first?.header("traceparent")))
            let span = try #require(tracer.spans.finishedSpans.first)
            #expect(span.operationName == "GET")
            #expect(span.attributes["error.type"]?.toSpanAttribute() == "503")
            #expect(span.status?.code == .error)
        }
    }

    @Test func eachSendOfTheAuthorizedClientIsAClientSpanAndTheRetryCarriesItsOwnTraceparent() async throws {
        try await withServer({ request in
            request.header("Authorization") == "Bearer new.jwt" ? .respond(status: 200, body: "{}") : .respond(status: 401)
        }) { server in
            var policy = AuthorizationPolicy()
            policy.add(try AuthorizationRule(origin: server.baseURL, scheme: .bearer))
            let provider = ScriptedProvider(.token("old.jwt"), .token("new.jwt"))
            provider.rejectionDecision = .retry
            let authorizer = try RequestAuthorizer(policy: policy, providers: [.bearer: provider], diagnostics: RecordingDiagnosticsSink())
            let client = AuthorizedHTTPClient(authorizer: authorizer, transport: TracingHTTPTransport(URLSessionHTTPTransport(timeout: 10), tracer: tracer))
            #expect(try await client.send(OutgoingRequest(method: "GET", url: server.baseURL.appendingPathComponent("me"))).statusCode == 200)
            let sent = server.requests.map { $0.header("traceparent") }
            #expect(sent.count == 2 && sent.allSatisfy(isW3CTraceparent) && sent[0] != sent[1])
            #expect(tracer.spans.finishedSpans.map { $0.attributes["http.response.status_code"]?.toSpanAttribute() } == [401, 200])
        }
    }

    @Test func aSendThatThrowsEndsItsSpanWithTheErrorsTypeAndAnUnknownMethodIsOther() async throws {
        let failing = RecordingTransport()
        failing.enqueue(.failure(URLError(.cannotConnectToHost)))
        let transport = TracingHTTPTransport(failing, tracer: tracer)
        await #expect(throws: URLError.self) {
            _ = try await transport.send(OutgoingRequest(method: "BREW", url: URL(string: "https://user:pw-secret@api.example.com/pot?key=secret-value#part")!))
        }
        let span = try #require(tracer.spans.finishedSpans.first)
        #expect(span.operationName == "HTTP")
        #expect(span.attributes["http.request.method"]?.toSpanAttribute() == "_OTHER")
        #expect(span.attributes["http.request.method_original"]?.toSpanAttribute() == "BREW")
        #expect(span.attributes["server.port"]?.toSpanAttribute() == 443)
        #expect(span.attributes["url.full"]?.toSpanAttribute() == "https://api.example.com/pot")
        #expect(span.attributes["error.type"]?.toSpanAttribute() == String(reflecting: URLError.self).toSpanAttribute())
        #expect(span.status?.code == .error)
        #expect(span.errors.count == 1)
    }

    /// The secrets the requests below carry; none may reach a span.
    static let secrets = ["pw-secret", "key-secret", "frag-secret", "token-secret-value"]

    /// Every text a tracer may export of the recorded errors: description, reflection, and the
    /// `localizedDescription` of the bridged error.
    func recordedErrorTexts(_ span: FinishedInMemorySpan) -> [String] {
        span.errors.flatMap { [String(describing: $0.error), String(reflecting: $0.error), ($0.error as NSError).localizedDescription] }
    }

    @Test func aURLSessionErrorIsRecordedWithoutTheURLsUserInfoOrQuery() async throws {
        // Nothing listens on port 1: the send fails, and the error's text names the URL.
        let url = URL(string: "http://user:pw-secret@127.0.0.1:1/pot?api_key=key-secret#frag-secret")!
        let transport = TracingHTTPTransport(URLSessionHTTPTransport(timeout: 10), tracer: tracer)
        await #expect(throws: (any Error).self) {
            _ = try await transport.send(OutgoingRequest(method: "GET", url: url, headers: ["Authorization": "Bearer token-secret-value"]))
        }
        let span = try #require(tracer.spans.finishedSpans.first)
        #expect(span.errors.count == 1)
        let texts = recordedErrorTexts(span)
        for text in texts {
            #expect(!Self.secrets.contains { text.contains($0) }, "\(text)")
            #expect(!text.contains("user:"), "\(text)")
        }
    }

    @Test func aTransportErrorIsRecordedAsItsTypeAndItsTextWithTheRequestsSecretsRedacted() async throws {
        struct ChattyError: Error, CustomStringConvertible {
            var description: String {
                "could not reach <https://user:pw-secret@api.example.com/v1/pot?api_key=key-secret&n=1#frag-secret> "
                    + "(key key-secret, sent with Bearer token-secret-value)"
            }
        }
        let failing = RecordingTransport()
        failing.enqueue(.failure(ChattyError()))
        let url = URL(string: "https://user:pw-secret@api.example.com/v1/pot?api_key=key-secret&n=1#frag-secret")!
        await #expect(throws: ChattyError.self) {
            _ = try await TracingHTTPTransport(failing, tracer: tracer)
                .send(OutgoingRequest(method: "GET", url: url, headers: ["Authorization": "Bearer token-secret-value"]))
        }
        let span = try #require(tracer.spans.finishedSpans.first)
        let recorded = try #require(span.errors.first)
        #expect(String(describing: recorded.error) == String(reflecting: ChattyError.self)
            + ": could not reach <https://api.example.com/v1/pot?<redacted>> (key <redacted>, sent with <redacted>)")
        #expect(span.attributes["error.type"]?.toSpanAttribute() == String(reflecting: ChattyError.self).toSpanAttribute())
        for text in recordedErrorTexts(span) {
            #expect(!Self.secrets.contains { text.contains($0) }, "\(text)")
        }
    }
}
