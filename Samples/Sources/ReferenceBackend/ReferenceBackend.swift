import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import Synchronization

/// A reference backend for SDKAuthorization: a real HTTP server on loopback that plays the
/// vendor API (Bloomreach Engagement endpoints, a Rover-style ticketing endpoint, a CCAI-style
/// token exchange, Braze-style SDK signature checks, an OAuth server with DPoP-bound tokens) and the
/// app's own login server, and verifies real RS256 JWTs and ES256 DPoP proofs.
///
/// Start one per test; each binds its own port:
///
/// ```swift
/// let backend = try await ReferenceBackend.start(.init(apiKeys: ["key-1"], projectToken: "project-1"))
/// let token = try backend.issueToken(userId: "u1")
/// // POST backend.baseURL + "/webxp/projects/project-1/appinbox/fetch"
/// //   with "Authorization: Bearer <token>" and body {"customer_ids":{"registered":"u1"}}
/// let seen = await backend.records()   // what the SDK really sent
/// await backend.stop()
/// ```
///
/// ## SDK signatures (Braze style)
///
/// `POST /braze/apps/<appId>/data`, for each app of ``Configuration/signatureApps``, takes the
/// signature in `X-Braze-Auth-Signature: <compact JWT>` (absent or empty: none) and a JSON object
/// body `{"user_id": "<id>", "request_id": "<unique string>", "events": [{"name": "...",
/// "user_id": "<optional>"}]}`. `request_id` is required (a string of 1...200 bytes); `user_id`
/// absent (or null) means an anonymous user, whose requests are never checked; `events` is
/// optional. A body that is not such an object is `400 invalid_request`, an unknown app
/// `404 unknown_app`, a body over the size limit `413 body_too_large`. Every request is recorded
/// (``RecordedRequest/signature`` holds the header).
///
/// What an identified user's request gets depends on the app's ``SignatureEnforcement``
/// (``SignatureEnforcement/disabled`` unless the ``SignatureApp`` says otherwise, as in Braze):
///
/// - Accepted (always under ``SignatureEnforcement/disabled``): `201 {"request_id":"<id>","success":true}`.
/// - ``SignatureEnforcement/optional``, signature failed: still `201`, with
///   `{"auth_error":{"error_code":N,"optional":true,"reason":"..."},"request_id":"<id>","success":true,"user_id":"<user_id>"}`.
/// - ``SignatureEnforcement/required``, signature failed: `401` with exactly
///   `{"auth_error":{"error_code":N,"reason":"..."},"user_id":"<user_id>"}`.
///
/// `reason` is a short sentence that never quotes the signature. The checks run in this order
/// and the first failure is reported (``SignatureErrorCode``): 26 MISSING_TOKEN, 20
/// DECODING_ERROR (not three base64url parts with JSON object header and payload, or longer than
/// ``maximumAuthorizationHeaderSize`` bytes), 24 INCORRECT_ALGORITHM (`alg` not `RS256`), 25
/// PUBLIC_KEY_ERROR (the app has no key), 27 NO_MATCHING_PUBLIC_KEYS (no key of the app verifies
/// it; the key whose `kid` matches is tried first, then every other), 10 EXPIRATION_REQUIRED (no
/// numeric `exp`), 22 EXPIRED (`exp` not after ``Configuration/now``), 23 INVALID_PAYLOAD (`sub`
/// not a string, `aud` present and not `braze`, `iss` present and not the app's
/// ``SignatureApp/apiKey`` when set), 21 SUBJECT_MISMATCH (`sub` is not the body's `user_id`),
/// 28 PAYLOAD_USER_ID_MISMATCH (an event names another `user_id`).
///
/// The app server's role mints signatures with the backend's signing key:
/// ``issueSignature(userId:variant:lifetime:audience:issuer:)`` or `POST /app/braze-signature`
/// with `{"userId": "...", "variant": "valid", "lifetimeSeconds": 60}`, answering
/// `200 {"signature": "<jwt>"}`. Enforcement changes at runtime with
/// ``setSignatureEnforcement(_:appId:)`` or `PUT /__braze/apps/<appId>/enforcement` with
/// `{"enforcement": "optional"}`. ``signatureDeliveries()`` counts how often each `request_id`
/// was accepted and ``signatureErrorReport(appId:)`` the failures per code.
///
/// ## DPoP (RFC 9449)
///
/// An OAuth authorization server and resource server whose access tokens are bound to the
/// client's key. Failures answer `{"error": "<code>", "error_description": "..."}` with a
/// ``DPoPErrorCode`` (the description never quotes a token or proof).
///
/// `POST /dpop/token` takes an `application/x-www-form-urlencoded` body
/// `grant_type=client_credentials&client_id=<id>` and one `DPoP: <proof>` header. Checked in
/// this order, each failure a `400`: the body (`invalid_request`), `grant_type`
/// (`unsupported_grant_type`), `client_id` in ``Configuration/dpopClientIDs`` (`invalid_client`),
/// the proof for `POST` and this endpoint's URL (`invalid_dpop_proof`; an `ath` claim is not
/// checked here), its `nonce` equal to the current nonce (`use_dpop_nonce`, with
/// `DPoP-Nonce: <current nonce>`). Success: `200 {"access_token": "<token>", "token_type":
/// "DPoP", "expires_in": <``Configuration/dpopTokenLifetime`` in whole seconds>}` with
/// `DPoP-Nonce` and `Cache-Control: no-store`. The token (random, kept server side) is bound to
/// the RFC 7638 thumbprint of the proof's key, for the `client_id`, until
/// ``Configuration/now`` + ``Configuration/dpopTokenLifetime``.
///
/// `GET` or `POST /dpop/resource` takes `Authorization: DPoP <access token>` (scheme
/// case-insensitive) and one `DPoP` proof for the request's method and this URL, whose `ath` is
/// base64url(SHA-256(token)). Each failure is a `401` with a `WWW-Authenticate` challenge,
/// checked in this order:
///
/// - No `Authorization`, or another scheme (also `Bearer` with a DPoP token): `invalid_token`,
///   `WWW-Authenticate: DPoP algs="ES256"`.
/// - Two `Authorization` fields, one over ``maximumAuthorizationHeaderSize`` bytes, or a token
///   not issued or expired (see ``expireDPoPTokens()``): `invalid_token`,
///   `WWW-Authenticate: DPoP error="invalid_token", algs="ES256"`.
/// - The proof invalid, or made with another key than the token's: `invalid_dpop_proof`,
///   `WWW-Authenticate: DPoP error="invalid_dpop_proof", algs="ES256"`.
/// - The proof's `nonce` missing or not current: `use_dpop_nonce`, `WWW-Authenticate: DPoP
///   error="use_dpop_nonce", error_description="Resource server requires nonce in DPoP proof",
///   algs="ES256"` and `DPoP-Nonce: <current nonce>`.
///
/// Success: `200 {"jkt": "<thumbprint>", "subject": "<client_id>", "success": true}` with `DPoP-Nonce`.
///
/// A proof is valid when the request has exactly one `DPoP` field, at most
/// ``maximumDPoPProofSize`` bytes, holding a compact JWS whose header has `typ` `dpop+jwt`,
/// `alg` `ES256`, no `crit`, and a `jwk` that is an EC P-256 public key (32-byte base64url `x`
/// and `y`, no `d`) verifying the raw `r || s` signature; and whose claims have a `jti` string
/// of 1 to ``maximumDPoPJTILength`` characters not seen in the last 2 × ``dpopProofClockSkew``
/// seconds (at most ``dpopReplayCacheCapacity`` remembered per client), `htm` equal to the method, `htu`
/// equal to the endpoint's URL (query and fragment dropped, scheme and host lowercased, default
/// port dropped; on ``baseURL`` or on the host the request's `Host` names), a numeric `iat`
/// within ``dpopProofClockSkew`` seconds of ``Configuration/now``, and a string `nonce` if any.
/// The nonce is 32 random bytes, base64url; ``rotateDPoPNonce()`` replaces it.
///
/// ## Test routes: loopback only
///
/// Five routes exist only to drive tests and samples, and none of them asks for credentials:
/// `POST /app/login` mints valid tokens for any user, `POST /app/braze-signature` valid SDK
/// signatures, `PUT /__braze/apps/<appId>/enforcement` switches an app's signature enforcement,
/// `GET /__records` answers every request recorded so far with its full `Authorization` header,
/// and `/__redirect` redirects anywhere.
/// They are served only when the server is bound to a loopback address (`127.0.0.0/8`, `::1`,
/// or `localhost`, which binds one of them), as decided by ``isLoopback(_:)`` on the address the
/// server really bound. Bound to any other address (for example `0.0.0.0`), they answer `404`
/// exactly like an unknown route, unless ``Configuration/allowTestRoutesOnAnyInterface`` is set
/// (`--allow-test-routes` on the `reference-backend` command). ``testRoutesEnabled`` tells which
/// applies. The Swift API (``issueToken(userId:variant:lifetime:audience:issuer:claims:)``,
/// ``issueSignature(userId:variant:lifetime:audience:issuer:)``, ``setSignatureEnforcement(_:appId:)``,
/// ``records()``) is not affected.
///
/// ## Limits
///
/// Every request is checked before it is parsed, and no input makes the server trap:
///
/// - An `Authorization` header longer than ``maximumAuthorizationHeaderSize`` bytes is refused
///   with `401 token_too_large` before any base64 or JSON decoding.
/// - A request body longer than ``maximumRequestBodySize`` bytes is refused with
///   `413 body_too_large`.
/// - JWT headers, claims and request bodies are read in one linear pass, nesting at most
///   ``maximumTokenJSONDepth`` (tokens) or ``maximumBodyJSONDepth`` (bodies) levels; deeper or
///   otherwise invalid JSON (including a repeated key) is refused, as `malformed_token` for tokens.
/// - Token lifetimes (`lifetimeSeconds` of `POST /app/login`, ``Configuration/tokenLifetime`` and
///   the `lifetime` of ``issueToken(userId:variant:lifetime:audience:issuer:claims:)``) must be
///   finite and within ``tokenLifetimeRange``; `POST /app/login` answers anything else, and a
///   token it would mint longer than ``maximumAuthorizationHeaderSize``, with `400 invalid_request`.
/// - A bearer token on an Engagement endpoint is accepted only when the body names the customer
///   in `customer_ids.registered` (a non-empty string) equal to the token's `sub`: a body that
///   does not is refused with `403 customer_id_missing`, a different customer with
///   `403 subject_mismatch`.
public final class ReferenceBackend: Sendable {
    /// What the backend accepts. All properties have defaults except the keys you care about.
    public struct Configuration: Sendable {
        /// The address to bind. Default `127.0.0.1`.
        public var host: String
        /// The port to bind; `0` (the default) picks a free port, see ``ReferenceBackend/baseURL``.
        public var port: Int
        /// The valid API keys for `Authorization: Token <key>`.
        public var apiKeys: Set<String>
        /// The Engagement project token expected in the endpoint paths (or `project_id` query).
        public var projectToken: String
        /// Endpoints that refuse `Token` with 403 `bearer_required` and accept only `Bearer`.
        public var bearerRequiredEndpoints: Set<EngagementEndpoint>
        /// When set, a bearer token's `aud` must be (or contain) this value; login tokens carry it.
        public var audience: String?
        /// When set, a bearer token's `iss` must equal this value; login tokens carry it.
        public var issuer: String?
        /// The lifetime of minted tokens, in seconds, within ``ReferenceBackend/tokenLifetimeRange``.
        /// Default 3600.
        public var tokenLifetime: TimeInterval
        /// Serves the test routes (`POST /app/login`, `POST /app/braze-signature`,
        /// `PUT /__braze/apps/<appId>/enforcement`, `GET /__records`, `/__redirect`) whatever
        /// address the server is bound to. Default `false`: they are served only on a loopback
        /// address (see ``ReferenceBackend`` and ``ReferenceBackend/isLoopback(_:)``). Anyone who
        /// can reach the server can then mint valid tokens and read every recorded
        /// `Authorization` header.
        public var allowTestRoutesOnAnyInterface: Bool
        /// The secret the host app and the platform share for signing payloads that
        /// `POST /ccai/exchange` accepts (HS256 or HS384). Default `sample-exchange-secret`; not empty.
        public var exchangeSecret: String
        /// The lifetime of the auth tokens `/ccai/exchange` issues, in seconds, within
        /// ``ReferenceBackend/tokenLifetimeRange``. Default 600.
        public var exchangeTokenLifetime: TimeInterval
        /// The apps of the signature role (`POST /braze/apps/<appId>/data`), with unique ids.
        /// Default: one app, `reference-app`, Required, verified with the app server's keys.
        public var signatureApps: [SignatureApp]
        /// The OAuth clients `POST /dpop/token` issues DPoP-bound access tokens to (its
        /// `client_id`); any other is refused with `400 invalid_client`. Default `["sample-dpop-client"]`.
        public var dpopClientIDs: Set<String>
        /// The lifetime of the access tokens `POST /dpop/token` issues, in seconds, within
        /// ``ReferenceBackend/tokenLifetimeRange``. Default 300.
        public var dpopTokenLifetime: TimeInterval
        /// The backend's wall clock, for token and signature expiry (and the `iat` of minted
        /// signatures), and for DPoP proofs' `iat` and DPoP access tokens' expiry. Default `Date()`.
        public var now: @Sendable () -> Date

        /// Creates a configuration.
        public init(
            host: String = "127.0.0.1",
            port: Int = 0,
            apiKeys: Set<String> = ["reference-api-key"],
            projectToken: String = "reference-project-token",
            bearerRequiredEndpoints: Set<EngagementEndpoint> = [],
            audience: String? = nil,
            issuer: String? = nil,
            tokenLifetime: TimeInterval = 3600,
            allowTestRoutesOnAnyInterface: Bool = false,
            exchangeSecret: String = "sample-exchange-secret",
            exchangeTokenLifetime: TimeInterval = 600,
            signatureApps: [SignatureApp] = [SignatureApp(id: "reference-app")],
            dpopClientIDs: Set<String> = ["sample-dpop-client"],
            dpopTokenLifetime: TimeInterval = 300,
            now: @escaping @Sendable () -> Date = { Date() }
        ) {
            self.host = host
            self.port = port
            self.apiKeys = apiKeys
            self.projectToken = projectToken
            self.bearerRequiredEndpoints = bearerRequiredEndpoints
            self.audience = audience
            self.issuer = issuer
            self.tokenLifetime = tokenLifetime
            self.allowTestRoutesOnAnyInterface = allowTestRoutesOnAnyInterface
            self.exchangeSecret = exchangeSecret
            self.exchangeTokenLifetime = exchangeTokenLifetime
            self.signatureApps = signatureApps
            self.dpopClientIDs = dpopClientIDs
            self.dpopTokenLifetime = dpopTokenLifetime
            self.now = now
        }

        /// Why this configuration cannot start, or `nil` when it can.
        var problem: String? {
            if !(0...65535).contains(port) {
                return "port \(port) is not in 0...65535"
            }
            if !ReferenceBackend.tokenLifetimeRange.contains(tokenLifetime) {
                return "tokenLifetime \(tokenLifetime) is not a number of seconds in \(ReferenceBackend.tokenLifetimeRange)"
            }
            if !ReferenceBackend.tokenLifetimeRange.contains(exchangeTokenLifetime) {
                return "exchangeTokenLifetime \(exchangeTokenLifetime) is not a number of seconds in \(ReferenceBackend.tokenLifetimeRange)"
            }
            if !ReferenceBackend.tokenLifetimeRange.contains(dpopTokenLifetime) {
                return "dpopTokenLifetime \(dpopTokenLifetime) is not a number of seconds in \(ReferenceBackend.tokenLifetimeRange)"
            }
            if exchangeSecret.isEmpty {
                return "exchangeSecret is empty"
            }
            return signatureProblem
        }
    }

    // MARK: Limits

    /// The longest `Authorization` header accepted, in bytes (8 KiB): longer ones are refused with
    /// `401 token_too_large` before any decoding.
    public static let maximumAuthorizationHeaderSize = 8192
    /// The longest request body read, in bytes (1 MiB): longer ones are refused with `413 body_too_large`.
    public static let maximumRequestBodySize = 1 << 20
    /// How deep arrays and objects may nest in a JWT header or payload (as JWTKit allows in headers).
    public static let maximumTokenJSONDepth = JSONParser.defaultMaximumDepth
    /// How deep arrays and objects may nest in a request body read by the backend.
    public static let maximumBodyJSONDepth = 64
    /// The token lifetimes accepted, in seconds: 1 second to 1 day. Fractions of a second are
    /// dropped from `exp`.
    public static let tokenLifetimeRange: ClosedRange<TimeInterval> = 1...86_400

    /// Whether `host` is a loopback address: `localhost` (any case, optionally with a final dot),
    /// an IPv4 address in `127.0.0.0/8`, `::1` (in any spelling, optionally in brackets or with a
    /// zone), or an IPv4-mapped IPv6 address in `::ffff:127.0.0.0/104`.
    ///
    /// Any other name, even one that resolves to a loopback address, is not loopback: the test
    /// routes fail closed.
    public static func isLoopback(_ host: String) -> Bool {
        LoopbackAddress.contains(host)
    }

    /// Errors thrown by ``start(_:)``.
    public enum StartError: Error, Sendable {
        /// The configuration is out of range (a port outside `0...65535`, a
        /// ``Configuration/tokenLifetime`` outside ``ReferenceBackend/tokenLifetimeRange``, a
        /// signature app with a bad or repeated id, more than
        /// ``ReferenceBackend/maximumSignaturePublicKeys`` public keys or a PEM that does not parse).
        case invalidConfiguration(String)
        /// The server stopped (for example, the port was in use) before it listened.
        case serverStoppedBeforeListening((any Error)?)
        /// The server did not listen within 10 seconds.
        case timedOut
        /// The bound address does not form a valid URL.
        case invalidAddress(String)
    }

    /// Thrown by ``ReferenceBackend/issueToken(userId:variant:lifetime:audience:issuer:claims:)``
    /// for a lifetime outside ``ReferenceBackend/tokenLifetimeRange`` (including NaN and infinity).
    public struct TokenLifetimeError: Error, Sendable, Equatable, CustomStringConvertible {
        /// The lifetime asked for, in seconds.
        public var lifetime: TimeInterval

        /// Creates the error for `lifetime`.
        public init(lifetime: TimeInterval) {
            self.lifetime = lifetime
        }

        /// Names the lifetime and the accepted range.
        public var description: String {
            "Token lifetime \(lifetime) s is not within \(ReferenceBackend.tokenLifetimeRange) s."
        }
    }

    /// The configuration the backend runs with (``Configuration/port`` is the requested port).
    public let configuration: Configuration
    /// `http://<host>:<bound port>`, with the real port even when ``Configuration/port`` was 0.
    public let baseURL: URL
    /// The port the server is bound to.
    public let port: Int
    /// Whether the test routes (`POST /app/login`, `POST /app/braze-signature`,
    /// `PUT /__braze/apps/<appId>/enforcement`, `GET /__records`, `/__redirect`) are served:
    /// the server is bound to a loopback address, or ``Configuration/allowTestRoutesOnAnyInterface``
    /// is set. When `false` they answer `404`.
    public var testRoutesEnabled: Bool { testRoutes.isOpen }

    let keyRing: KeyRing
    let requestLog: RequestLog
    let exchangeLedger: ExchangeLedger
    let signatures: SignatureRegistry
    let dpop: DPoPState
    private let testRoutes: TestRouteGate
    private let serviceGroup: ServiceGroup
    private let runTask: Task<Void, Never>

    private init(
        configuration: Configuration,
        baseURL: URL,
        port: Int,
        keyRing: KeyRing,
        requestLog: RequestLog,
        exchangeLedger: ExchangeLedger,
        signatures: SignatureRegistry,
        dpop: DPoPState,
        testRoutes: TestRouteGate,
        serviceGroup: ServiceGroup,
        runTask: Task<Void, Never>
    ) {
        self.configuration = configuration
        self.baseURL = baseURL
        self.port = port
        self.keyRing = keyRing
        self.requestLog = requestLog
        self.exchangeLedger = exchangeLedger
        self.signatures = signatures
        self.dpop = dpop
        self.testRoutes = testRoutes
        self.serviceGroup = serviceGroup
        self.runTask = runTask
    }

    /// Starts a backend in this process and returns once it is listening.
    ///
    /// Generates the first RSA-2048 signing key, starts Hummingbird on
    /// ``Configuration/host``:``Configuration/port`` and waits (at most 10 s) for the bound port.
    /// The test routes are opened once the bound address is known (see ``testRoutesEnabled``).
    /// Call ``stop()`` when done. Any number of backends may run at once.
    ///
    /// - Throws: ``StartError``, ``StartError/invalidConfiguration(_:)`` before anything starts
    ///   when the configuration is out of range.
    public static func start(_ configuration: Configuration = Configuration()) async throws -> ReferenceBackend {
        if let problem = configuration.problem { throw StartError.invalidConfiguration(problem) }
        let keyRing = try await KeyRing.make()
        let requestLog = RequestLog()
        let testRoutes = TestRouteGate()
        let exchangeLedger = ExchangeLedger()
        let signatures = try await SignatureRegistry.make(configuration.signatureApps)
        let dpop = DPoPState()
        let routes = Routes(
            configuration: configuration, keyRing: keyRing, requestLog: requestLog, testRoutes: testRoutes,
            exchangeLedger: exchangeLedger, signatures: signatures, dpop: dpop
        )
        let router = Router(context: BasicRequestContext.self)
        routes.register(on: router)

        var logger = Logger(label: "ReferenceBackend")
        logger.logLevel =
            ProcessInfo.processInfo.environment["REFERENCE_BACKEND_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .warning

        let bound = OneShot<Int>()
        let app = Application(
            router: router,
            configuration: ApplicationConfiguration(address: .hostname(configuration.host, port: configuration.port)),
            onServerRunning: { channel in
                let address = channel.localAddress
                // Decided on the address really bound, not on the name asked for.
                testRoutes.open(configuration.allowTestRoutesOnAnyInterface || address?.ipAddress.map(ReferenceBackend.isLoopback) == true)
                dpop.port = address?.port ?? configuration.port
                bound.resolve(.success(address?.port ?? configuration.port))
            },
            logger: logger
        )
        var groupConfiguration = ServiceGroupConfiguration(services: [app], logger: logger)
        groupConfiguration.maximumGracefulShutdownDuration = .seconds(5)
        groupConfiguration.maximumCancellationDuration = .seconds(5)
        let serviceGroup = ServiceGroup(configuration: groupConfiguration)
        let runTask = Task {
            do {
                try await serviceGroup.run()
                bound.resolve(.failure(StartError.serverStoppedBeforeListening(nil)))
            } catch {
                bound.resolve(.failure(StartError.serverStoppedBeforeListening(error)))
            }
        }
        let timeout = Task {
            try await Task.sleep(for: .seconds(10))
            bound.resolve(.failure(StartError.timedOut))
        }
        let port: Int
        do {
            port = try await bound.value()
            timeout.cancel()
        } catch {
            timeout.cancel()
            runTask.cancel()
            await runTask.value
            throw error
        }

        let hostInURL = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        guard let baseURL = URL(string: "http://\(hostInURL):\(port)") else {
            runTask.cancel()
            await runTask.value
            throw StartError.invalidAddress("\(configuration.host):\(port)")
        }
        return ReferenceBackend(
            configuration: configuration, baseURL: baseURL, port: port,
            keyRing: keyRing, requestLog: requestLog, exchangeLedger: exchangeLedger, signatures: signatures, dpop: dpop,
            testRoutes: testRoutes, serviceGroup: serviceGroup, runTask: runTask
        )
    }

    /// Stops the server gracefully (open connections get at most 5 s) and waits until it has shut
    /// down. Calling it again does nothing.
    public func stop() async {
        await serviceGroup.triggerGracefulShutdown()
        await runTask.value
    }

    // MARK: Request record

    /// Every request received on the vendor routes so far, oldest first.
    public func records() async -> [RecordedRequest] {
        requestLog.all()
    }

    /// Forgets all recorded requests.
    public func clearRecords() async {
        requestLog.clear()
    }

    // MARK: Token exchange

    /// Makes every auth token `/ccai/exchange` has issued expired, so tests and samples see an
    /// expiry without waiting: `/ccai/chats` then answers `401 token_expired`.
    public func expireExchangedTokens() {
        exchangeLedger.expireAll()
    }

    // MARK: Key ring

    /// Mints a token as the app's login server would (the same as `POST /app/login`), without HTTP.
    ///
    /// - Parameters:
    ///   - userId: The `sub` claim (``TokenVariant/otherSubject`` appends `-other`).
    ///   - variant: Which token to mint; only ``TokenVariant/valid`` verifies.
    ///   - lifetime: Seconds until `exp`, within ``tokenLifetimeRange``; default
    ///     ``Configuration/tokenLifetime``.
    ///   - audience: The `aud` claim; default ``Configuration/audience`` (omitted when both are nil).
    ///   - issuer: The `iss` claim; default ``Configuration/issuer`` (omitted when both are nil).
    ///   - claims: Extra string claims, e.g. `["ticketmasterID": "tm-1"]`. Standard claims win.
    /// - Returns: The compact JWT. It may be longer than ``maximumAuthorizationHeaderSize`` (to
    ///   test that limit); `POST /app/login` refuses to mint such tokens.
    /// - Throws: ``TokenLifetimeError`` when `lifetime` is outside ``tokenLifetimeRange``.
    public func issueToken(
        userId: String,
        variant: TokenVariant = .valid,
        lifetime: TimeInterval? = nil,
        audience: String? = nil,
        issuer: String? = nil,
        claims: [String: String] = [:]
    ) throws -> String {
        try keyRing.mint(
            userId: userId,
            variant: variant,
            lifetime: lifetime ?? configuration.tokenLifetime,
            audience: audience ?? configuration.audience,
            issuer: issuer ?? configuration.issuer,
            claims: claims
        ).token
    }

    /// Adds a new RSA-2048 key and signs with it from now on. Tokens signed by the previous keys
    /// stay valid until their key is dropped: at most 3 keys are trusted, so the oldest is dropped
    /// on the third rotation after it stopped signing.
    ///
    /// - Returns: The new key's `kid`.
    @discardableResult
    public func rotateSigningKey() async throws -> String {
        try await keyRing.rotate()
    }

    /// The `kid`s of the trusted keys, oldest first; the last one signs new tokens.
    public var trustedKeyIDs: [String] {
        keyRing.trustedKeyIDs
    }
}

/// A value that is set once and awaited by any number of callers.
final class OneShot<Value: Sendable>: Sendable {
    private struct State {
        var result: Result<Value, any Error>?
        var waiters: [CheckedContinuation<Value, any Error>] = []
    }

    private let state = Mutex(State())

    /// Sets the result; later calls are ignored.
    func resolve(_ result: Result<Value, any Error>) {
        let waiters = state.withLock { state -> [CheckedContinuation<Value, any Error>] in
            guard state.result == nil else { return [] }
            state.result = result
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(with: result) }
    }

    func value() async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            let result = state.withLock { state -> Result<Value, any Error>? in
                if let result = state.result { return result }
                state.waiters.append(continuation)
                return nil
            }
            if let result { continuation.resume(with: result) }
        }
    }
}
