import Foundation
import SDKAuthorization
import SDKAuthorizationModeKit

/// RFC 9449 DPoP: access tokens bound to the app's key. Each request carries
/// `Authorization: DPoP <access token>` and `DPoP: <proof>`, a JWT the app's key signs for that one
/// request (its method, its URL, the token's hash and the server's nonce).
///
/// ```swift
/// let dpop = try DPoPProvider(tokenURL: URL(string: "https://auth.example.com/token")!, clientID: "my-app",
///                             signer: P256DPoPSigner())
/// let authorizer = try RequestAuthorizer(policy: AuthorizationPolicy(rules: [AuthorizationRule(host: "api.example.com", scheme: .bearer)]),
///                                        providers: [.bearer: dpop])
/// ```
///
/// One token request serves any number of concurrent requests (the kit's `CredentialRefresher`)
/// until 30 seconds before its `expires_in`, on both clocks. A server's `DPoP-Nonce` goes into the
/// next proofs to its origin; `use_dpop_nonce` is retried once with it (``nonceRetry``) and
/// `invalid_token` once with a new token; any other rejection fails. ``clearToken()`` is its
/// logout, and every wait ends by the request's deadline. `Samples/DPoPMode/README.md` says more.
///
/// No error, diagnostic, `description` or mirror shows a token, a proof or the key.
public final class DPoPProvider: AuthorizationProvider, CustomStringConvertible, CustomReflectable {
    /// Seconds a token request may take before its waiting requests fail (30).
    public static let tokenRequestTimeout: TimeInterval = 30
    /// A token is not used within this many seconds of its expiry (30), or within half its lifetime
    /// when it lives less than twice that.
    public static let expiryLeeway: TimeInterval = 30

    /// Where tokens are fetched.
    public let tokenURL: URL
    /// The client ID sent with each token request.
    public let clientID: String
    /// Whether a request the server answers with `use_dpop_nonce` is sent once more with its nonce.
    public let nonceRetry: Bool

    private let proofs: DPoPProofMaker
    private let transport: any HTTPTransport
    private let diagnostics: any DiagnosticsSink
    private let nonces = DPoPNonces()
    private let alarms: Alarms
    private let tokens: CredentialRefresher<(value: String, expiry: TokenExpiry)>

    /// Creates the provider: `tokenURL` https (http on a loopback host only) without user info, query
    /// or fragment; `clientID` 1 to 256 visible ASCII characters; `transport` sends the token
    /// requests (the client's own, so its tests see them).
    ///
    /// - Throws: `ConfigurationError.invalidValue(key:reason:)` naming `dpopTokenURL` or `dpopClientID`.
    public init(
        tokenURL: URL,
        clientID: String,
        signer: any DPoPSigner,
        transport: any HTTPTransport = URLSessionHTTPTransport(),
        clock: any AuthorizationClock = SystemClock(),
        diagnostics: any DiagnosticsSink = StandardErrorDiagnosticsSink.inDebugBuilds,
        nonceRetry: Bool = true
    ) throws(ConfigurationError) {
        try DPoPAuthorizationMode.tokenURLKey.check(.url(tokenURL))
        try DPoPAuthorizationMode.clientIDKey.check(.string(clientID))
        self.tokenURL = tokenURL
        self.clientID = clientID
        self.nonceRetry = nonceRetry
        self.proofs = DPoPProofMaker(signer: signer, clock: clock)
        self.transport = transport
        self.diagnostics = diagnostics
        self.alarms = Alarms(clock: clock, keepsIdleDriver: true)
        self.tokens = try CredentialRefresher(
            options: .init(timeout: Self.tokenRequestTimeout, name: "DPoP token request",
                           timeoutError: { .dpopTokenRequestFailed(reason: "no token within \(Int($0)) seconds") }),
            clock: clock, diagnostics: diagnostics,
            isFresh: { !$0.expiry.isStale(on: clock, leeway: 0) }, credential: { .authorization(scheme: "DPoP", $0.value) })
    }

    /// The token endpoint and whether a token is held; never the token.
    public var description: String {
        "DPoPProvider(\(LogText.url(tokenURL)), token: \(tokens.current == nil ? "none" : "set, redacted"))"
    }

    /// The description only.
    public var customMirror: Mirror { Mirror(self, children: ["description": description], displayStyle: .class) }

    /// Forgets the token (logout): waiting requests and a request rejected later fail with
    /// ``RequestError/Code/credentialCleared``, and a token request in flight is dropped.
    public func clearToken() {
        tokens.clear()
    }

    // MARK: AuthorizationProvider

    /// `Authorization: DPoP <token>` with `DPoP: <a proof for this request>`.
    public func credential(for context: AuthorizationContext) async throws -> Credential {
        let token = try await tokens.value(for: context) { [self] _ in try await requestToken() }.value
        let request = context.request
        let nonce = nonces.nonce(for: request.url)
        // The app's signer may never answer: bounding it by the deadline lets this provider declare `endsByDeadline`.
        let proof = try await alarms.untilDeadline(context.deadline, endpoint: context.endpoint) { [proofs] in
            try await proofs.proof(method: request.method, url: request.url, accessToken: token, nonce: nonce)
        }
        return .authorization(scheme: "DPoP", token).adding("DPoP", value: proof)
    }

    /// `use_dpop_nonce` with a usable nonce: one retry when ``nonceRetry`` allows; `invalid_token`:
    /// one retry with a new token; anything else fails.
    public func credentialRejected(_ credential: Credential, response: ServerResponse, context: AuthorizationContext) async -> RejectionDecision {
        let nonce = nonces.remember(from: response, for: context.url)
        guard response.statusCode == 401 else { return .fail }
        let error = response.authenticationChallenges.first { $0.isScheme("DPoP") && $0.parameter("error") != nil }?.parameter("error") ?? TokenEndpointAnswer.errorCode(in: response)
        switch error {
        case "use_dpop_nonce" where nonceRetry && nonce != nil:
            return .retryWithoutRefresh
        case "use_dpop_nonce":
            diagnostics.log(.warning, "The server asked for a DPoP nonce for \(context.requestName) \(nonce == nil ? "without giving a usable one" : "and dpopNonceRetry is off"); the request fails",
                            endpoint: context.endpoint, scheme: context.scheme, event: "dpopNonceRefused")
            return .fail
        case "invalid_token":
            return tokens.rejected(credential, response: response)
        default:
            let shown = error.map { LogText.escaped($0, limit: 64) } ?? "no DPoP error"
            diagnostics.log(.warning, "The server rejected the DPoP credential of \(context.requestName) (\(shown)); the request fails",
                            endpoint: context.endpoint, scheme: context.scheme, event: "dpopRejected")
            return .fail
        }
    }

    /// Keeps the response's `DPoP-Nonce` for the next proofs to its origin.
    public func credentialAccepted(_ credential: Credential, response: ServerResponse, context: AuthorizationContext) async {
        nonces.remember(from: response, for: context.url)
    }

    /// `true`: successful answers may carry a new nonce.
    public var inspectsAcceptedResponses: Bool { true }

    /// The user changed: as ``clearToken()``.
    public func identityDidChange() async {
        clearToken()
    }

    /// `true`: the token and signer waits end by the request's deadline; the answer hooks do not wait.
    public var endsByDeadline: Bool { true }

    // MARK: Tokens

    /// Fetches a token, once more after a `use_dpop_nonce` refusal that gave a nonce.
    private func requestToken() async throws(RequestError) -> (value: String, expiry: TokenExpiry) {
        var retried = false
        while true {
            let proof = try await proofs.proof(method: "POST", url: tokenURL, accessToken: nil, nonce: nonces.nonce(for: tokenURL))
            let request = OutgoingRequest.tokenRequest(to: tokenURL, form: ["grant_type": "client_credentials", "client_id": clientID], headers: ["DPoP": proof])
            let response: ServerResponse
            do {
                response = try await transport.send(request)
            } catch {
                if error is CancellationError || Task.isCancelled { throw .cancelled }
                throw .dpopTokenRequestFailed(reason: "the token request could not be sent (\(RequestError.summary(of: error)))", underlyingError: error)
            }
            let nonce = nonces.remember(from: response, for: tokenURL)
            if !retried, nonceRetry, nonce != nil, response.statusCode == 400, TokenEndpointAnswer.errorCode(in: response) == "use_dpop_nonce" {
                retried = true
                continue
            }
            do {
                let answer = try TokenEndpointAnswer(response, from: "the token endpoint", tokenType: "DPoP")
                return (answer.token, TokenExpiry(lifetime: answer.lifetime - min(Self.expiryLeeway, answer.lifetime / 2), clock: proofs.clock))
            } catch {
                throw .dpopTokenRequestFailed(reason: error.reason, response: error.response)
            }
        }
    }
}
