import Foundation
import SDKAuthorizationTesting
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationTokenExchange

/// The exchange mode's signings are bounded as the core's refreshing providers' are, through the
/// same public seams (`Credential.Issuer`, the context's refresh window): none for a request a
/// logout overtook, and no more than the authorizer's refresh window allows, whatever starts them.
@Suite("Token exchange: no signing after a logout, the refresh window's number at most", .hangLimit)
struct TokenExchangeRefreshBoundsTests {
    let clock = ManualClock()
    let sink = RecordingDiagnosticsSink()
    let exchangeURL = URL(string: "https://platform.example.com/ccai/exchange")!
    let url = URL(string: "https://api.example.com/v1/chats")!

    /// A provider whose signer counts its signings and whose platform answers with numbered tokens.
    func provider(signings: Counter) throws -> TokenExchangeProvider {
        let exchanges = Counter()
        let platform = RecordingTransport { _ in
            ServerResponse(statusCode: 200, body: Data(#"{"auth_token":"auth-\#(exchanges.increment())","expires_in":600}"#.utf8))
        }
        return try TokenExchangeProvider(exchangeURL: exchangeURL, signer: .async { [clock] _ in
            _ = signings.increment()
            return makeJWT(["iat": clock.now().timeIntervalSince1970, "exp": clock.now().timeIntervalSince1970 + 300])
        }, transport: platform, clock: clock, diagnostics: sink)
    }

    func client(_ provider: any AuthorizationProvider, transport: RecordingTransport, window: AuthorizationOptions.RefreshWindow = AuthorizationOptions.RefreshWindow()) throws -> AuthorizedHTTPClient {
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(host: "api.example.com", scheme: .bearer))
        let authorizer = try RequestAuthorizer(policy: policy, providers: [.bearer: provider],
                                               options: AuthorizationOptions(refreshWindow: window, requestDeadline: 60), clock: clock, diagnostics: sink)
        return AuthorizedHTTPClient(authorizer: authorizer, transport: transport)
    }

    func start(_ client: AuthorizedHTTPClient) -> Task<Result<ServerResponse, RequestError>, Never> {
        Task { [url] () -> Result<ServerResponse, RequestError> in
            do throws(RequestError) { return .success(try await client.send(OutgoingRequest(method: "GET", url: url))) } catch { return .failure(error) }
        }
    }

    @Test func aRequestRejectedAfterALogoutFailsAsClearedAtItsEvaluationWithoutSigningOrASecondSend() async throws {
        let signings = Counter()
        let exchange = try provider(signings: signings)
        let held = AsyncGate(), arrived = Counter()
        let api = RecordingTransport { _ in
            _ = arrived.increment()
            await held.wait()
            return ServerResponse(statusCode: 401)
        }
        let request = start(try client(exchange, transport: api))
        await eventually("the request reached the server", { arrived.current == 1 })
        #expect(signings.current == 1)
        exchange.clearUserData()
        held.open()
        guard case .failure(let error) = await request.value else { Issue.record("the request succeeded"); return }
        #expect(error.code == .credentialCleared)
        #expect(error.wasSent)
        // Which check stopped it: the evaluation's (it fails with the 401 it saw and says so), not
        // the retry's or the provider's, which would also stop it had the evaluation let it through.
        #expect(error.response?.statusCode == 401)
        #expect(sink.messages(at: .info).contains { $0.contains("after a logout; it fails as cleared, without a refresh or a retry") })
        #expect(api.requests.map { $0.value(forHeader: "Authorization") } == ["Bearer auth-1"], "never sent with a token signed after the logout")
        #expect(signings.current == 1, "nothing signed for it after the logout")
    }

    @Test(arguments: [1, 2])
    func theRefreshWindowCapsSigningsWhenTheServerRejectsEveryToken(_ maximum: Int) async throws {
        let signings = Counter()
        let exchange = try provider(signings: signings)
        let api = RecordingTransport(statusCode: 401)
        let client = try client(exchange, transport: api, window: AuthorizationOptions.RefreshWindow(maximumRefreshes: maximum, interval: 30))
        var codes: [RequestError.Code?] = []
        for _ in 0..<5 {
            if case .failure(let error) = await start(client).value { codes.append(error.code) } else { codes.append(nil) }
        }
        #expect(signings.current == maximum, "every signing counts, the first one too")
        #expect(codes.last == .refreshWindowExceeded)
        #expect(codes.allSatisfy { $0 == .authorizationRejected || $0 == .refreshWindowExceeded })
    }
}
