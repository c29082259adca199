import Foundation
import SDKAuthorization
import SDKAuthorizationModeKit

/// RFC 9449 DPoP: access tokens bound to the app's key. Each request carries
/// `Authorization: DPoP <access token>` and `DPoP: <proof>`, a JWT signed with the app's key for
/// that one request (its method, its URL, the token's hash and the server's nonce).
///
/// Made by ``DPoPAuthorizationMode`` from a configuration that chooses `DPoPMode.DPoP`, or directly:
///
/// ```swift
/// let dpop = try DPoPProvider(tokenURL: URL(string: "https://auth.example.com/token")!, clientID: "my-app",
///                             signer: P256DPoPSigner())
/// let authorizer = try RequestAuthorizer(policy: AuthorizationPolicy(rules: [AuthorizationRule(host: "api.example.com", scheme: .bearer)]),
///                                        providers: [.bearer: dpop])
/// ```
///
/// - **Tokens.** `POST <tokenURL>` with `grant_type=client_credentials&client_id=<clientID>` and a
///   proof for that request; any number of concurrent requests share one token request, and the
///   token serves until 30 seconds before its `expires_in` (1 second to 1 day; half its lifetime for
///   a token that lives less than a minute), counted on both the wall clock and the monotonic one.
///   The answer is read by the kit's `TokenEndpointAnswer` (16 KiB, a `b64token` of at most 8 KiB).
///   Every token request asks the authorizer's refresh window first
///   (`AuthorizationContext.RefreshWindowGate.admitRefresh(replacing:)`).
/// - **Nonces.** A server's `DPoP-Nonce` (on any answer, error or success) is kept per origin and put
///   in the next proofs for that origin. The token endpoint's `use_dpop_nonce` refusal is retried once
///   with its nonce; a resource server's 401 `WWW-Authenticate: DPoP error="use_dpop_nonce"` asks
///   for one retry with a new proof (``nonceRetry``), which the authorizer's refresh window does not
///   count (`RejectionDecision.retryWithoutRefresh`: the token stays). A redirect hop gets a new
///   proof too (the core asks again for a credential with added fields). A nonce that is empty, longer than 512 bytes,
///   or not visible ASCII is ignored.
/// - **Rejections.** A 401 with `error="invalid_token"` marks the token stale: the retry waits for a
///   new one. Any other rejection (`invalid_dpop_proof`, a 403, no DPoP challenge) fails the request.
///   The error code is read from the first `DPoP` challenge of `WWW-Authenticate` that has one, or,
///   when there is none, from a JSON body's `error` (at most 4 KiB read). A request is retried at
///   most once.
/// - **Failures.** A refused or unusable token answer fails the waiting requests with
///   ``RequestError/Code/dpopTokenRequestFailed``, naming the server's OAuth error code; a signer that
///   fails, with ``RequestError/Code/dpopSigningFailed``. No error or diagnostic holds a token, a
///   proof or a key.
/// - **Logout.** ``clearToken()`` and an identity change drop the token and start a new generation: a
///   request rejected after it fails with ``RequestError/Code/credentialCleared``.
/// - **Deadlines.** Every wait (for the token, for the app's signer) ends by the request's deadline.
///
/// Its `description` and mirror never show the token, a proof or the key.
public final class DPoPProvider: AuthorizationProvider, CustomStringConvertible, CustomReflectable {
    /// Seconds a token request may take before its waiting requests fail (30).
    public static let tokenRequestTimeout: TimeInterval = 30
    /// A token is not used within this many seconds of its expiry (30), or within half its lifetime
    /// of it when it lives less than twice that.
    public static let expiryLeeway: TimeInterval = 30

    /// Where tokens are fetched.
    public let tokenURL: URL
    /// The client ID sent with each token request.
    public let clientID: String
    /// Whether a request the server answers with `use_dpop_nonce` is sent once more with its nonce.
    public let nonceRetry: Bool

    private let proofs: DPoPProofMaker
    private let transport: any HTTPTransport
    private let clock: any AuthorizationClock
    private let diagnostics: any DiagnosticsSink
    private let nonces = DPoPNonces()
    /// Where the wait for the app's signer is bounded by each request's deadline.
    private let alarms: Alarms
    /// The access token, the one token request that runs, and the requests that wait for it.
    private let tokens: CredentialRefresher<DPoPToken>

    /// An access token and when it stops being used.
    struct DPoPToken: Sendable {
        let value: String
        /// Wall-clock time after which it is not used.
        let usableUntil: Date
        /// Monotonic time after which it is not used (a wall clock set back does not extend it).
        let usableUntilUptime: TimeInterval

        func isFresh(on clock: any AuthorizationClock) -> Bool {
            clock.now() < usableUntil && clock.monotonicNow() < usableUntilUptime
        }
    }

    /// Creates the provider.
    ///
    /// - Parameters:
    ///   - tokenURL: The token endpoint: https, or http on a loopback host only (`localhost`,
    ///     `127.0.0.0/8`, `[::1]`); no user info, query or fragment.
    ///   - clientID: The client's ID: 1 to 256 visible ASCII characters.
    ///   - signer: The app's key.
    ///   - transport: How token requests are sent (the client's own transport, so its tests see them).
    ///   - clock: Wall-clock time for `iat` and expiry, monotonic time for the time limits.
    ///   - diagnostics: Where token failures and rejections are reported.
    ///   - nonceRetry: Whether a `use_dpop_nonce` answer is retried once with the server's nonce
    ///     (default `true`).
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
        if let problem = ConfigurationError.problem(withSecureEndpoint: tokenURL) { throw .invalidValue(key: DPoPAuthorizationMode.tokenURLKey, reason: problem) }
        if let problem = DPoPAuthorizationMode.problem(withClientID: clientID) { throw .invalidValue(key: DPoPAuthorizationMode.clientIDKey, reason: problem) }
        self.tokenURL = tokenURL
        self.clientID = clientID
        self.nonceRetry = nonceRetry
        self.proofs = DPoPProofMaker(signer: signer, clock: clock)
        self.transport = transport
        self.clock = clock
        self.diagnostics = diagnostics
        self.alarms = Alarms(clock: clock, keepsIdleDriver: true)
        self.tokens = try CredentialRefresher(
            options: .init(timeout: Self.tokenRequestTimeout, name: "DPoP token request",
                           timeoutError: { .dpopTokenRequestFailed(reason: "no token within \(Int($0)) seconds") }),
            clock: clock, diagnostics: diagnostics,
            isFresh: { $0.isFresh(on: clock) }, credential: { .authorization(scheme: "DPoP", $0.value) })
    }

    /// The token endpoint and whether a token is held; never the token.
    public var description: String {
        "DPoPProvider(\(LogText.url(tokenURL)), token: \(tokens.current == nil ? "none" : "set, redacted"))"
    }

    /// The description only.
    public var customMirror: Mirror { Mirror(self, children: ["description": description], displayStyle: .class) }

    /// Forgets the token (logout): waiting requests fail with ``RequestError/Code/credentialCleared``,
    /// a token request in flight is cancelled and what it returns is dropped, and a request sent
    /// before and rejected after fails as cleared instead of fetching a token for it.
    public func clearToken() {
        tokens.clear()
    }

    // MARK: AuthorizationProvider

    /// `Authorization: DPoP <token>` with `DPoP: <a proof for this request>`; fetches a token first
    /// when none is fresh.
    public func credential(for context: AuthorizationContext) async throws -> Credential {
        let token = try await tokens.value(for: context) { [self] _ in try await requestToken() }.value
        let request = context.request
        let nonce = nonces.nonce(for: request.url)
        // The app's signer may never answer: the request waits for it until its deadline only,
        // which is what lets this provider declare `endsByDeadline`.
        let proof = try await alarms.untilDeadline(context.deadline, endpoint: context.endpoint) { [proofs] in
            try await proofs.proof(method: request.method, url: request.url, accessToken: token, nonce: nonce)
        }
        return .authorization(scheme: "DPoP", token).adding("DPoP", value: proof)
    }

    /// A 401 whose DPoP challenge says `use_dpop_nonce` (with a usable `DPoP-Nonce`) asks for one
    /// retry with the new nonce when ``nonceRetry`` allows; `invalid_token` marks the token stale
    /// and asks for one retry with a new token; anything else fails.
    public func credentialRejected(_ credential: Credential, response: ServerResponse, context: AuthorizationContext) async -> RejectionDecision {
        let nonce = nonces.remember(from: response, for: context.url)
        guard response.statusCode == 401 else { return .fail }
        let error = response.authenticationChallenges.first { $0.isScheme("DPoP") && $0.parameter("error") != nil }?.parameter("error") ?? TokenEndpointAnswer.errorCode(in: response)
        switch error {
        case "use_dpop_nonce":
            guard nonceRetry, nonce != nil else {
                diagnostics.log(.warning, "The server asked for a DPoP nonce for \(context.requestName) \(nonce == nil ? "without giving a usable one" : "and dpopNonceRetry is off"); the request fails",
                                endpoint: context.endpoint, scheme: context.scheme, event: "dpopNonceRefused")
                return .fail
            }
            // The token stays: a retry, not a refresh (the authorizer's refresh window does not count it).
            return .retryWithoutRefresh
        case "invalid_token":
            return tokens.rejected(credential, response: response)
        default:
            let shown = error.map { LogText.escaped($0, limit: 64) } ?? "no DPoP error"
            diagnostics.log(.warning, "The server rejected the DPoP credential of \(context.requestName) (\(shown)); the request fails",
                            endpoint: context.endpoint, scheme: context.scheme, event: "dpopRejected")
            return .fail
        }
    }

    /// Keeps the response's `DPoP-Nonce`, if any, for the next proofs to its origin.
    public func credentialAccepted(_ credential: Credential, response: ServerResponse, context: AuthorizationContext) async {
        nonces.remember(from: response, for: context.url)
    }

    /// `true`: successful answers may carry a new nonce.
    public var inspectsAcceptedResponses: Bool { true }

    /// The user changed: as ``clearToken()``.
    public func identityDidChange() async {
        clearToken()
    }

    /// `true`: the token wait and the signer's are ended by the request's deadline, and the answer
    /// hooks do not wait.
    public var endsByDeadline: Bool { true }

    // MARK: Tokens

    private func requestToken() async throws(RequestError) -> DPoPToken {
        var attempt = 1
        while true {
            let proof = try await proofs.proof(method: "POST", url: tokenURL, accessToken: nil, nonce: nonces.nonce(for: tokenURL))
            let request = OutgoingRequest(method: "POST", url: tokenURL, headers: [
                "Content-Type": "application/x-www-form-urlencoded",
                "Accept": "application/json",
                "DPoP": proof,
            ], body: Data("grant_type=client_credentials&client_id=\(Self.formEncoded(clientID))".utf8))
            let response: ServerResponse
            do {
                response = try await transport.send(request)
            } catch {
                if error is CancellationError || Task.isCancelled { throw .cancelled }
                throw .dpopTokenRequestFailed(reason: "the token request could not be sent (\(RequestError.summary(of: error)))", underlyingError: error)
            }
            let nonce = nonces.remember(from: response, for: tokenURL)
            if attempt == 1, nonceRetry, nonce != nil, response.statusCode == 400, TokenEndpointAnswer.errorCode(in: response) == "use_dpop_nonce" {
                attempt += 1
                continue
            }
            return try token(from: response)
        }
    }

    /// The token in the endpoint's answer (`TokenEndpointAnswer`: size first, then status,
    /// `token_type` DPoP, `access_token` and `expires_in`, 1 second to 1 day).
    private func token(from response: ServerResponse) throws(RequestError) -> DPoPToken {
        let answer: TokenEndpointAnswer
        do {
            answer = try TokenEndpointAnswer(response, from: "the token endpoint", tokenType: "DPoP")
        } catch {
            throw .dpopTokenRequestFailed(reason: error.reason, response: error.response)
        }
        let usable = answer.lifetime - min(Self.expiryLeeway, answer.lifetime / 2)
        return DPoPToken(value: answer.token, usableUntil: clock.now().addingTimeInterval(usable), usableUntilUptime: clock.monotonicNow() + usable)
    }

    /// `text` as an `application/x-www-form-urlencoded` value: everything but unreserved characters
    /// percent-encoded.
    static func formEncoded(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics.intersection(CharacterSet(charactersIn: Unicode.Scalar(0)..<Unicode.Scalar(128)))
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }
}
