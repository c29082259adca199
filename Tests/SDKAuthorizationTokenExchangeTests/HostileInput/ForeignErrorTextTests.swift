import Foundation
import SDKAuthorizationTesting
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationTokenExchange

/// A message an app's provider or signer writes reaches errors and logs cut and escaped.
@Suite("Error texts from app code", .hangLimit)
struct ForeignErrorTextTests {
    /// A line break, a bidirectional override and 10,000 more characters.
    static let hostile = "first line\nforged: login ok \u{202E}gnp.exe " + String(repeating: "x", count: 10_000)

    func expectSafe(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(!text.contains("\n"), sourceLocation: sourceLocation)
        #expect(!text.unicodeScalars.contains("\u{202E}"), sourceLocation: sourceLocation)
        #expect(text.contains("\\u{a}") && text.contains("\\u{202e}"), "escaped, still readable", sourceLocation: sourceLocation)
        #expect(text.count < 700, "cut: \(text.count) characters", sourceLocation: sourceLocation)
    }

    @Test func aProvidersOwnErrorMessageIsCutAndEscapedInTheErrorAndTheLog() async throws {
        let sink = RecordingDiagnosticsSink()
        let provider = ScriptedProvider([.failure(RequestError.signingFailed(reason: Self.hostile))])
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(host: "api.example.com", scheme: .bearer))
        let client = AuthorizedHTTPClient(authorizer: try RequestAuthorizer(policy: policy, providers: [.bearer: provider], diagnostics: sink),
                                          transport: RecordingTransport(statusCode: 200))
        do {
            _ = try await client.send(OutgoingRequest(method: "GET", url: URL(string: "https://api.example.com/v1")!))
            Issue.record("the request was sent")
        } catch {
            #expect(error.code == .signingFailed)
            expectSafe(error.description)
            expectSafe(error.debugDescription)
        }
        let logged = try #require(sink.messages(at: .error).first)
        expectSafe(logged)
    }

    @Test func aSignersOwnErrorMessageIsCutAndEscaped() async throws {
        let exchange = try TokenExchangeProvider(exchangeURL: URL(string: "https://platform.example.com/ccai/exchange")!,
                                                 signer: .async { _ in throw RequestError.signingFailed(reason: Self.hostile) },
                                                 transport: RecordingTransport(statusCode: 200), clock: ManualClock(), diagnostics: RecordingDiagnosticsSink())
        let context = AuthorizationContext(endpoint: "chats", url: URL(string: "https://platform.example.com/ccai/chats")!)
        do {
            _ = try await exchange.credential(for: context)
            Issue.record("the exchange succeeded")
        } catch let error as RequestError {
            #expect(error.code == .signingFailed)
            expectSafe(error.description)
        }
    }

    @Test func aSafeMessageIsPassedOnAsItIs() {
        let error = RequestError.signingFailed(reason: "the user has no 'phone' — añadir")
        #expect(error.sanitized().description == error.description)
    }
}
