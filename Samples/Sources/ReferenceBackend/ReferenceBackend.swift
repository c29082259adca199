import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import Synchronization

/// A reference backend for SDKAuthorization: a real HTTP server on loopback that plays the
/// vendor API (Bloomreach Engagement endpoints, a Rover-style ticketing endpoint) and the app's own
/// login server, and verifies real RS256 JWTs.
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
        /// The lifetime of minted tokens, in seconds. Default 3600.
        public var tokenLifetime: TimeInterval

        /// Creates a configuration.
        public init(
            host: String = "127.0.0.1",
            port: Int = 0,
            apiKeys: Set<String> = ["reference-api-key"],
            projectToken: String = "reference-project-token",
            bearerRequiredEndpoints: Set<EngagementEndpoint> = [],
            audience: String? = nil,
            issuer: String? = nil,
            tokenLifetime: TimeInterval = 3600
        ) {
            self.host = host
            self.port = port
            self.apiKeys = apiKeys
            self.projectToken = projectToken
            self.bearerRequiredEndpoints = bearerRequiredEndpoints
            self.audience = audience
            self.issuer = issuer
            self.tokenLifetime = tokenLifetime
        }
    }

    /// Errors thrown by ``start(_:)``.
    public enum StartError: Error, Sendable {
        /// The server stopped (for example, the port was in use) before it listened.
        case serverStoppedBeforeListening((any Error)?)
        /// The server did not listen within 10 seconds.
        case timedOut
        /// The bound address does not form a valid URL.
        case invalidAddress(String)
    }

    /// The configuration the backend runs with (``Configuration/port`` is the requested port).
    public let configuration: Configuration
    /// `http://<host>:<bound port>`, with the real port even when ``Configuration/port`` was 0.
    public let baseURL: URL
    /// The port the server is bound to.
    public let port: Int

    let keyRing: KeyRing
    let requestLog: RequestLog
    private let serviceGroup: ServiceGroup
    private let runTask: Task<Void, Never>

    private init(
        configuration: Configuration,
        baseURL: URL,
        port: Int,
        keyRing: KeyRing,
        requestLog: RequestLog,
        serviceGroup: ServiceGroup,
        runTask: Task<Void, Never>
    ) {
        self.configuration = configuration
        self.baseURL = baseURL
        self.port = port
        self.keyRing = keyRing
        self.requestLog = requestLog
        self.serviceGroup = serviceGroup
        self.runTask = runTask
    }

    /// Starts a backend in this process and returns once it is listening.
    ///
    /// Generates the first RSA-2048 signing key, starts Hummingbird on
    /// ``Configuration/host``:``Configuration/port`` and waits (at most 10 s) for the bound port.
    /// Call ``stop()`` when done. Any number of backends may run at once.
    public static func start(_ configuration: Configuration = Configuration()) async throws -> ReferenceBackend {
        let keyRing = try await KeyRing.make()
        let requestLog = RequestLog()
        let routes = Routes(configuration: configuration, keyRing: keyRing, requestLog: requestLog)
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
                bound.resolve(.success(channel.localAddress?.port ?? configuration.port))
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
            keyRing: keyRing, requestLog: requestLog, serviceGroup: serviceGroup, runTask: runTask
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

    // MARK: Key ring

    /// Mints a token as the app's login server would (the same as `POST /app/login`), without HTTP.
    ///
    /// - Parameters:
    ///   - userId: The `sub` claim (``TokenVariant/otherSubject`` appends `-other`).
    ///   - variant: Which token to mint; only ``TokenVariant/valid`` verifies.
    ///   - lifetime: Seconds until `exp`; default ``Configuration/tokenLifetime``.
    ///   - audience: The `aud` claim; default ``Configuration/audience`` (omitted when both are nil).
    ///   - issuer: The `iss` claim; default ``Configuration/issuer`` (omitted when both are nil).
    ///   - claims: Extra string claims, e.g. `["ticketmasterID": "tm-1"]`. Standard claims win.
    /// - Returns: The compact JWT.
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
