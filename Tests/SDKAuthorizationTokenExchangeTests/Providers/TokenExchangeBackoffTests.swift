import Foundation
import SDKAuthorizationTesting
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationModeKit
@testable import SDKAuthorizationTokenExchange

/// A refused or unusable exchange answer is remembered: no signing storm, and oversized answers are
/// refused before they are parsed.
@Suite("Token exchange backs off after a refusal", .hangLimit)
struct TokenExchangeBackoffTests {
    let clock = ManualClock()
    let sink = RecordingDiagnosticsSink()
    let exchangeURL = URL(string: "https://platform.example.com/ccai/exchange")!
    let context = AuthorizationContext(endpoint: "chats", url: URL(string: "https://platform.example.com/ccai/chats")!)
    let signings = Counter()

    func provider(_ platform: RecordingTransport, identity: String? = nil, store: (any CredentialStore)? = nil) throws -> TokenExchangeProvider {
        try TokenExchangeProvider(exchangeURL: exchangeURL, signer: .async { [clock, signings] _ in
            _ = signings.increment()
            return makeJWT(["iat": clock.now().timeIntervalSince1970, "exp": clock.now().timeIntervalSince1970 + 300], header: ["alg": "HS256", "typ": "JWT"])
        }, identity: identity, store: store, transport: platform, options: .init(expiryLeeway: 30), clock: clock, diagnostics: sink)
    }

    static func answer(_ token: String, lifetime: Int) -> ServerResponse {
        ServerResponse(statusCode: 200, body: Data(#"{"auth_token":"\#(token)","expires_in":\#(lifetime)}"#.utf8))
    }

    /// The request's error, or nil when it got a credential.
    func error(_ exchange: TokenExchangeProvider) async -> RequestError? {
        do {
            _ = try await exchange.credential(for: context)
            return nil
        } catch {
            return error as? RequestError
        }
    }

    @Test func tenRequestsAfterATooShortExpiresInSignAndExchangeOnce() async throws {
        let platform = RecordingTransport { _ in Self.answer("short-lived", lifetime: 10) }
        let exchange = try provider(platform)
        for index in 0..<10 {
            let error = await error(exchange)
            #expect(error?.code == .exchangeFailed, "request \(index)")
            if index > 0 {
                #expect(error?.description.contains("is not longer than the expiry leeway") == true)
                #expect(error?.description.contains("none is tried for 1 s more") == true, "\(String(describing: error))")
                #expect(error?.endpoint == "chats")
            }
        }
        #expect(signings.current == 1)
        #expect(platform.requests.count == 1)
    }

    @Test func theBackoffDoublesOnTheInjectedClockUpToFiveMinutes() async throws {
        let platform = RecordingTransport(statusCode: 403, body: #"{"error":"invalid_grant"}"#)
        let exchange = try provider(platform)
        _ = await error(exchange)
        #expect(platform.requests.count == 1)
        var waited: [TimeInterval] = []
        // After each refusal: nothing until the backoff has passed, then one more exchange.
        for refusal in 1...12 {
            let backoff = min(pow(2, Double(refusal - 1)), 300)
            clock.advance(by: backoff - 0.001)
            #expect(await error(exchange)?.description.contains("none is tried for 1 s more") == true)
            #expect(platform.requests.count == refusal, "after refusal \(refusal)")
            clock.advance(by: 0.001)
            #expect(await error(exchange)?.description.contains("refused the token request with HTTP 403") == true)
            #expect(platform.requests.count == refusal + 1)
            waited.append(backoff)
        }
        #expect(waited.suffix(3) == [300, 300, 300])
        #expect(signings.current == 13)
    }

    @Test func anExchangeThatSucceedsEndsTheBackoff() async throws {
        let platform = RecordingTransport { _ in Self.answer("auth-token", lifetime: 600) }
        platform.enqueue(.response(ServerResponse(statusCode: 503)), .response(ServerResponse(statusCode: 503)))
        let exchange = try provider(platform)
        _ = await error(exchange)
        clock.advance(by: 1)
        _ = await error(exchange)
        // Two refusals in a row: two seconds.
        clock.advance(by: 2)
        #expect(try await exchange.credential(for: context) == .bearer("auth-token"))
        #expect(platform.requests.count == 3)
        // The token expires; the next refusal starts from one second again.
        platform.enqueue(.response(ServerResponse(statusCode: 503)))
        clock.advance(by: 600)
        _ = await error(exchange)
        clock.advance(by: 1)
        #expect(try await exchange.credential(for: context) == .bearer("auth-token"))
        #expect(platform.requests.count == 5)
    }

    @Test func aTokenThatHasNotExpiredServesDuringTheBackoff() async throws {
        let platform = RecordingTransport { _ in Self.answer("auth-token", lifetime: 600) }
        let exchange = try provider(platform)
        #expect(try await exchange.credential(for: context) == .bearer("auth-token"))
        // Within the leeway of its expiry: the provider exchanges again, and the platform refuses.
        platform.enqueue(.response(ServerResponse(statusCode: 503)))
        clock.advance(by: 580)
        #expect(await error(exchange)?.code == .exchangeFailed)
        // During the backoff, the old token (20 s left) still serves; nothing is signed.
        #expect(try await exchange.credential(for: context) == .bearer("auth-token"))
        #expect(signings.current == 2)
        #expect(platform.requests.count == 2)
    }

    @Test func aSwitchOfIdentityEndsTheBackoff() async throws {
        let platform = RecordingTransport { _ in Self.answer("auth-token", lifetime: 600) }
        platform.enqueue(.response(ServerResponse(statusCode: 403)))
        let exchange = try provider(platform, identity: "user-a", store: MemoryCredentialStore())
        #expect(await error(exchange)?.code == .exchangeFailed)
        try exchange.switchIdentity(to: "user-b")
        #expect(try await exchange.credential(for: context) == .bearer("auth-token"))
        #expect(platform.requests.count == 2)
    }

    @Test func anExchangeAnswerOverTheSizeLimitIsRefusedBeforeItIsParsed() async throws {
        // A usable answer, padded past 64 KiB with whitespace any JSON reader would skip.
        let padding = String(repeating: " ", count: TokenExchangeProvider.maximumAnswerSize)
        let platform = RecordingTransport { _ in
            ServerResponse(statusCode: 200, body: Data(#"{"auth_token":"auth-token","expires_in":600}\#(padding)"#.utf8))
        }
        let store = MemoryCredentialStore()
        let exchange = try provider(platform, identity: "user-a", store: store)
        let error = await error(exchange)
        #expect(error?.code == .exchangeFailed)
        #expect(error?.description.contains("larger than 65536 bytes (65580); it is not read") == true, "\(String(describing: error))")
        #expect(exchange.currentToken == nil)
        #expect(try store.load(identity: "user-a", kind: .exchangeAtPlatform) == nil)
    }

    @Test func anExchangeAnswerAtTheSizeLimitIsRead() async throws {
        let body = #"{"auth_token":"auth-token","expires_in":600}"#
        let padding = String(repeating: " ", count: TokenExchangeProvider.maximumAnswerSize - body.utf8.count)
        let platform = RecordingTransport { _ in ServerResponse(statusCode: 200, body: Data((body + padding).utf8)) }
        #expect(try await provider(platform).credential(for: context) == .bearer("auth-token"))
    }
}
