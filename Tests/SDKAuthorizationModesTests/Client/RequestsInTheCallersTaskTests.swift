import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif
import SDKAuthorizationTesting
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationModeKit
@testable import SDKAuthorizationEngagement
@testable import SDKAuthorizationIDToken
@testable import SDKAuthorizationSignature
@testable import SDKAuthorizationTokenExchange

/// An app provider that answers at once, and says so.
struct ImmediateProvider: AuthorizationProvider {
    let token: String
    let tasks = Locked<[Int?]>([])
    func credential(for context: AuthorizationContext) async throws -> Credential {
        tasks.withLock { $0.append(currentTaskHash()) }
        return .bearer(token)
    }
    var endsByDeadline: Bool { true }
}

/// An app provider that declares nothing, records the task it was asked in, and answers after `wait`.
final class TaskRecordingProvider: AuthorizationProvider {
    let tasks = Locked<[Int?]>([])
    private let wait: @Sendable () async -> Void
    init(wait: @escaping @Sendable () async -> Void = {}) { self.wait = wait }
    func credential(for context: AuthorizationContext) async throws -> Credential {
        tasks.withLock { $0.append(currentTaskHash()) }
        await wait()
        return .bearer("token")
    }
}

/// A transport that declares nothing, records the task it sent in, and answers after `wait`.
final class TaskRecordingTransport: HTTPTransport {
    let tasks = Locked<[Int?]>([])
    private let wait: @Sendable () async -> Void
    init(wait: @escaping @Sendable () async -> Void = {}) { self.wait = wait }
    func send(_ request: OutgoingRequest) async throws -> ServerResponse {
        tasks.withLock { $0.append(currentTaskHash()) }
        await wait()
        return ServerResponse(statusCode: 200)
    }
}

/// A provider class that answers at once.
final class AnsweringProviderClass: NSObject, AuthorizationProviderType {
    required override init() {}
    func getAuthorizationToken() -> String? { "class.jwt.token" }
}

/// A request runs in its caller's task. A provider or transport that ends its waits by the deadline
/// by itself (``AuthorizationProvider/endsByDeadline``, ``HTTPTransport/endsByDeadline``) is called
/// there too; any other is called in a task of its own that the request waits for only until its
/// deadline. Either way the request ends at its deadline without the caller's task being cancelled.
/// All on the manual clock.
@Suite("Requests in the caller's task", .hangLimit)
struct RequestsInTheCallersTaskTests {
    let clock = ManualClock()
    let sink = RecordingDiagnosticsSink()
    let url = URL(string: "https://api.rover.io/ticketing")!

    func client(_ provider: any AuthorizationProvider, transport: any HTTPTransport) throws -> AuthorizedHTTPClient {
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(host: "api.rover.io", scheme: .bearer))
        let authorizer = try RequestAuthorizer(policy: policy, providers: [.bearer: provider], options: AuthorizationOptions(requestDeadline: 5),
                                               clock: clock, diagnostics: sink)
        return AuthorizedHTTPClient(authorizer: authorizer, transport: transport)
    }

    @Test func aRequestWhoseProviderAndTransportEndByTheDeadlineRunsInTheCallersTaskAndTheTransportGetsTheDeadline() async throws {
        let provider = ImmediateProvider(token: "token")
        let transport = DeadlineEndingTransport()
        let client = try client(provider, transport: transport)
        let start = clock.monotonicNow()
        let caller = currentTaskHash()
        let response = try await client.send(OutgoingRequest(method: "GET", url: url))
        #expect(response.statusCode == 200)
        #expect(provider.tasks.withLock { $0 } == [caller])
        #expect(transport.tasks.withLock { $0 } == [caller])
        #expect(transport.deadlines.withLock { $0.map(\.uptime) } == [start + 5])
        #expect(transport.sentWithoutDeadline.withLock { $0 } == 0)
    }

    @Test func aProviderThatDoesNotEndByTheDeadlineIsAskedInATaskOfItsOwnThatTheDeadlineCancels() async throws {
        let provider = NeverAnsweringProvider()
        let transport = DeadlineEndingTransport()
        let client = try client(provider, transport: transport)
        let request = Task {
            do throws(RequestError) {
                _ = try await client.send(OutgoingRequest(method: "GET", url: url))
                return (RequestError.Code?.none, Task.isCancelled)
            } catch {
                return (Optional(error.code), Task.isCancelled)
            }
        }
        await eventually("asked", { provider.contexts.withLock { $0.count } == 1 })
        await clock.waitForSleepers(count: 1)
        clock.advance(by: 5)
        let (code, callerCancelled) = await request.value
        #expect(code == .deadlineExceeded)
        #expect(!callerCancelled)
        #expect(transport.tasks.withLock { $0 }.isEmpty)
    }

    @Test func aTransportThatEndsItsSendAtTheDeadlineFailsTheRequestWithDeadlineExceededAsSent() async throws {
        let provider = ImmediateProvider(token: "token")
        let clock = clock
        let transport = DeadlineEndingTransport { _, deadline, _ in
            // The transport's own timer ran out: the deadline has passed when it throws.
            clock.advance(by: deadline.remaining(on: clock))
            throw URLError(.cancelled)
        }
        let client = try client(provider, transport: transport)
        do {
            _ = try await client.send(OutgoingRequest(method: "GET", url: url))
            Issue.record("the request succeeded")
        } catch {
            #expect(error.code == .deadlineExceeded)
            #expect(error.wasSent)
            #expect(!Task.isCancelled)
        }
        #expect(sink.messages(at: .warning).contains { $0.contains("5") && $0.lowercased().contains("deadline") })
    }

    @Test func aTransportErrorBeforeTheDeadlineIsStillATransportFailure() async throws {
        let transport = DeadlineEndingTransport { _, _, _ in throw URLError(.cannotConnectToHost) }
        let client = try client(ImmediateProvider(token: "token"), transport: transport)
        do {
            _ = try await client.send(OutgoingRequest(method: "GET", url: url))
            Issue.record("the request succeeded")
        } catch {
            #expect(error.code == .transportFailed)
        }
    }

    @Test func aProviderThatDeclaresNothingIsAskedInATaskOfItsOwnWhileTheRequestAndItsSendStayInTheCallersTask() async throws {
        let provider = TaskRecordingProvider()
        let transport = DeadlineEndingTransport()
        let client = try client(provider, transport: transport)
        let caller = currentTaskHash()
        let response = try await client.send(OutgoingRequest(method: "GET", url: url))
        #expect(response.statusCode == 200)
        let asked = provider.tasks.withLock { $0 }
        #expect(asked.count == 1 && asked != [caller])
        #expect(transport.tasks.withLock { $0 } == [caller])
    }

    @Test func aTransportThatDeclaresNothingSendsInATaskOfItsOwnWhileTheProviderIsAskedInTheCallersTask() async throws {
        let provider = ImmediateProvider(token: "token")
        let transport = TaskRecordingTransport()
        let client = try client(provider, transport: transport)
        let caller = currentTaskHash()
        let response = try await client.send(OutgoingRequest(method: "GET", url: url))
        #expect(response.statusCode == 200)
        #expect(provider.tasks.withLock { $0 } == [caller])
        let sent = transport.tasks.withLock { $0 }
        #expect(sent.count == 1 && sent != [caller])
    }

    @Test func aTransportThatDeclaresNothingAndIgnoresCancellationStillEndsTheRequestAtItsDeadlineAsSent() async throws {
        let gate = AsyncGate()
        defer { gate.open() }
        let transport = TaskRecordingTransport { await gate.wait() }   // ignores cancellation
        let client = try client(ImmediateProvider(token: "token"), transport: transport)
        let request = Task {
            do throws(RequestError) {
                _ = try await client.send(OutgoingRequest(method: "GET", url: url))
                return (RequestError.Code?.none, false, Task.isCancelled)
            } catch {
                return (Optional(error.code), error.wasSent, Task.isCancelled)
            }
        }
        await eventually("sent", { transport.tasks.withLock { $0.count } == 1 })
        await clock.waitForSleepers(count: 1)
        clock.advance(by: 5)
        let (code, wasSent, callerCancelled) = await request.value
        #expect(code == .deadlineExceeded)
        #expect(wasSent)
        #expect(!callerCancelled)
        #expect(sink.messages(at: .warning).contains { $0.contains("transport's send did not return by the deadline") })
    }

    @Test func aProviderThatDeclaresNothingAndIgnoresCancellationEndsAnAuthorizationThroughTheSeamAtItsDeadline() async throws {
        let gate = AsyncGate()
        defer { gate.open() }
        let provider = TaskRecordingProvider { await gate.wait() }   // ignores cancellation
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(host: "api.rover.io", scheme: .bearer))
        let authorizer = try RequestAuthorizer(policy: policy, providers: [.bearer: provider], options: AuthorizationOptions(requestDeadline: 5),
                                               clock: clock, diagnostics: sink)
        let request = Task {
            do throws(RequestError) {
                _ = try await authorizer.authorize(OutgoingRequest(method: "GET", url: url))
                return RequestError.Code?.none
            } catch {
                return Optional(error.code)
            }
        }
        await eventually("asked", { provider.tasks.withLock { $0.count } == 1 })
        await clock.waitForSleepers(count: 1)
        clock.advance(by: 5)
        #expect(await request.value == .deadlineExceeded)
    }

    @Test func everyBuiltInProviderAndTheURLSessionTransportEndByTheDeadlineAndTheDefaultsDoNot() throws {
        #expect(try IDTokenStore(authorizedDomains: ["api.rover.io"], clock: clock, diagnostics: sink).endsByDeadline)
        #expect(try RefreshingTokenProvider(clock: clock, diagnostics: sink) { .init("token") }.endsByDeadline)
        #expect(try TokenExchangeProvider(exchangeURL: URL(string: "https://ccai.example.com/exchange")!, signer: .async { _ in "signed" },
                                          clock: clock, diagnostics: sink).endsByDeadline)
        #expect(try SignatureAuthentication(diagnostics: sink).endsByDeadline)
        #expect(CustomerTokenProvider(type: AnsweringProviderClass.self, diagnostics: sink).endsByDeadline)
        #expect(URLSessionHTTPTransport().endsByDeadline)
        // What the app writes says nothing unless it says so.
        #expect(!NeverAnsweringProvider().endsByDeadline)
        #expect(!RecordingTransport().endsByDeadline)
    }

    @Test func theCachingProviderEndsByTheDeadlineOnlyWhenTheProviderItWrapsDoes() {
        #expect(CachingAuthorizationProvider(wrapping: ImmediateProvider(token: "a")).endsByDeadline)
        #expect(!CachingAuthorizationProvider(wrapping: NeverAnsweringProvider()).endsByDeadline)
    }

    #if canImport(Glibc)
    @Test func theURLSessionTransportCancelsASendToAServerThatNeverAnswersWhenItsDeadlineHasPassed() async throws {
        let listener = try SilentListener()
        defer { listener.close() }
        let transport = URLSessionHTTPTransport(timeout: 3600)
        let request = OutgoingRequest(method: "GET", url: URL(string: "http://127.0.0.1:\(listener.port)/hangs")!)
        // The deadline is already over on the manual clock: the send is cancelled at once rather
        // than after the session's hour-long timeout.
        let deadline = RequestDeadline(seconds: 0, from: clock)
        await #expect(throws: URLError.self) {
            _ = try await transport.send(request, deadline: deadline, clock: clock)
        }
    }

    /// The deadline is an alarm on the clock the send is given: the send goes on while the clock
    /// stands before it, and is cancelled once the clock passes it.
    @Test func theURLSessionTransportCancelsASendWhenItsClockPassesTheDeadlineNotBefore() async throws {
        let listener = try SilentListener()
        defer { listener.close() }
        let transport = URLSessionHTTPTransport(timeout: 3600)
        let request = OutgoingRequest(method: "GET", url: URL(string: "http://127.0.0.1:\(listener.port)/hangs")!)
        let deadline = RequestDeadline(seconds: 5, from: clock)
        let ended = Counter()
        let send = Task { () -> Bool in
            defer { _ = ended.increment() }
            do { _ = try await transport.send(request, deadline: deadline, clock: clock); return false } catch { return error is URLError }
        }
        clock.advance(by: 4.999)
        for _ in 0..<2_000 { await Task.yield() }
        #expect(ended.current == 0)
        clock.advance(by: 0.001)
        await eventually("the send was cancelled at its deadline", { ended.current == 1 })
        #expect(await send.value)
    }
    #endif
}

#if canImport(Glibc)
/// A TCP socket on 127.0.0.1 that listens and never accepts: connections complete (the kernel's
/// backlog) and no byte of a response ever comes.
final class SilentListener: Sendable {
    let descriptor: Int32
    let port: Int

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(descriptor, 8) == 0 else { Glibc.close(descriptor); throw POSIXError(.EADDRINUSE) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        self.descriptor = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    func close() { Glibc.close(descriptor) }
}
#endif
