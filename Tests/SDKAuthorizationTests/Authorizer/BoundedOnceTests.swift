import Foundation
import SDKAuthorization
import SDKAuthorizationTesting
import Testing
import TestSupport

/// Whether a provider's or a transport's calls must be bounded by the deadline is decided once,
/// when it is installed, not consulted on every request.
@Suite("Whether calls are bounded is decided when a provider or transport is installed", .hangLimit)
struct BoundedOnceTests {
    let url = URL(string: "https://api.example.com/v1/me")!

    /// A provider that counts how often it is asked whether it ends by the deadline.
    final class CountingProvider: AuthorizationProvider {
        let reads = Counter()
        func credential(for context: AuthorizationContext) async throws -> Credential { .bearer("token") }
        var endsByDeadline: Bool {
            _ = reads.increment()
            return true
        }
    }

    /// A provider that counts how often it is asked whether it reads accepted answers.
    final class CountingInspector: AuthorizationProvider {
        let reads = Counter()
        let accepted = Counter()
        func credential(for context: AuthorizationContext) async throws -> Credential { .bearer("token") }
        func credentialAccepted(_ credential: Credential, response: ServerResponse, context: AuthorizationContext) async {
            _ = accepted.increment()
        }
        var inspectsAcceptedResponses: Bool {
            _ = reads.increment()
            return true
        }
        var endsByDeadline: Bool { true }
    }

    /// A transport that counts the same.
    final class CountingTransport: HTTPTransport {
        let reads = Counter()
        func send(_ request: OutgoingRequest) async throws -> ServerResponse { ServerResponse(statusCode: 200) }
        func send(_ request: OutgoingRequest, deadline: RequestDeadline, clock: any AuthorizationClock) async throws -> ServerResponse {
            ServerResponse(statusCode: 200)
        }
        var endsByDeadline: Bool {
            _ = reads.increment()
            return true
        }
    }

    @Test func aProvidersEndsByDeadlineIsReadWhenItIsInstalledNotOnEveryRequest() async throws {
        let provider = CountingProvider()
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(host: "api.example.com", scheme: .bearer))
        let authorizer = try RequestAuthorizer(policy: policy, providers: [.bearer: provider], clock: ManualClock(), diagnostics: RecordingDiagnosticsSink())
        let atInstall = provider.reads.current
        for _ in 0..<5 { _ = try await authorizer.authorize(OutgoingRequest(method: "GET", url: url)) }
        #expect(provider.reads.current == atInstall, "five requests read it \(provider.reads.current - atInstall) more times")
        authorizer.setProvider(provider, for: .bearer)
        #expect(provider.reads.current == atInstall + 1, "installing it again reads it once more")
    }

    @Test func aProvidersInspectsAcceptedResponsesIsReadWhenItIsInstalledNotOnEveryRequest() async throws {
        let provider = CountingInspector()
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(host: "api.example.com", scheme: .bearer))
        let authorizer = try RequestAuthorizer(policy: policy, providers: [.bearer: provider], clock: ManualClock(), diagnostics: RecordingDiagnosticsSink())
        let client = AuthorizedHTTPClient(authorizer: authorizer, transport: CountingTransport())
        let atInstall = provider.reads.current
        for _ in 0..<5 { _ = try await client.send(OutgoingRequest(method: "GET", url: url)) }
        #expect(provider.reads.current == atInstall, "five requests read it \(provider.reads.current - atInstall) more times")
        // Read once, and obeyed: every accepted answer reached the hook.
        #expect(provider.accepted.current == 5)
    }

    @Test func aTransportsEndsByDeadlineIsReadWhenTheClientIsMadeNotOnEverySend() async throws {
        let transport = CountingTransport()
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(host: "api.example.com", scheme: .none))
        let client = AuthorizedHTTPClient(authorizer: try RequestAuthorizer(policy: policy, providers: [:], clock: ManualClock(),
                                                                            diagnostics: RecordingDiagnosticsSink()), transport: transport)
        let atInstall = transport.reads.current
        for _ in 0..<5 { _ = try await client.send(OutgoingRequest(method: "GET", url: url)) }
        #expect(transport.reads.current == atInstall)
    }
}
