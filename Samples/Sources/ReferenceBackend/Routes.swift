import Foundation
import Hummingbird

/// The HTTP routes: the nine Engagement endpoints, `GET /rover/ticketing`, the token exchange,
/// the signature role and the DPoP role (`TokenExchange.swift`, `SignatureEnforcement.swift`,
/// `DPoP.swift`), the API's OpenAPI
/// document (`GET /openapi.yaml`, ``ReferenceBackend/openAPIDocument``), and the test
/// routes `POST /app/login`, `POST /app/braze-signature`, `PUT /__braze/apps/<appId>/enforcement`,
/// `GET /__records` and `/__redirect`, served only while ``testRoutes`` is open.
struct Routes: Sendable {
    let configuration: ReferenceBackend.Configuration
    let keyRing: KeyRing
    let requestLog: RequestLog
    let testRoutes: TestRouteGate
    let exchangeLedger: ExchangeLedger
    let signatures: SignatureRegistry
    let dpop: DPoPState

    func register(on router: Router<BasicRequestContext>) {
        registerTokenExchange(on: router)
        registerDPoP(on: router)
        registerSignatures(on: router)
        for endpoint in EngagementEndpoint.allCases {
            router.post(RouterPath(endpoint.routePath)) { request, context in
                try await self.engagement(endpoint, request: request, context: context)
            }
        }
        router.get("/rover/ticketing") { request, _ in
            try await self.roverTicketing(request: request)
        }
        // The API's own OpenAPI document (openapi.yaml), from which ReferenceBackendClient is generated.
        router.get("/openapi.yaml") { _, _ in
            Response(
                status: .ok,
                headers: [.contentType: "application/yaml"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: ReferenceBackend.openAPIDocument))
            )
        }
        router.post("/app/login") { request, _ in
            try self.requireTestRoutes()
            return try await self.login(request: request)
        }
        router.get("/__records") { _, _ in
            try self.requireTestRoutes()
            return try Self.json(.ok, requestLog.all())
        }
        // A redirect to any URL (`?to=<absolute URL>&status=307`), for testing that clients
        // drop the Authorization header when a redirect leaves the host. Recorded like the others.
        router.on("/__redirect", method: .post) { request, _ in
            try self.requireTestRoutes()
            return try await self.redirect(request)
        }
        router.on("/__redirect", method: .get) { request, _ in
            try self.requireTestRoutes()
            return try await self.redirect(request)
        }
    }

    /// Answers `404` exactly as for an unknown route (the router's own error) unless the test
    /// routes are open.
    func requireTestRoutes() throws {
        guard testRoutes.isOpen else { throw HTTPError(.notFound) }
    }

    private func redirect(_ request: Request) async throws -> Response {
        guard case .success = try await record(request) else { return Self.bodyTooLarge() }
        guard let target = request.uri.queryParameters.get("to"), URL(string: target)?.scheme != nil else {
            return Self.failure(.invalidRequest, "__redirect needs an absolute URL in the query item 'to'.")
        }
        let code = request.uri.queryParameters.get("status").flatMap(Int.init) ?? 307
        guard [301, 302, 303, 307, 308].contains(code) else {
            return Self.failure(.invalidRequest, "__redirect status must be 301, 302, 303, 307 or 308.")
        }
        return Response(status: .init(code: code), headers: [.location: target])
    }

    // MARK: Vendor API role

    private func engagement(_ endpoint: EngagementEndpoint, request: Request, context: BasicRequestContext) async throws -> Response {
        guard case .success(let body) = try await record(request) else { return Self.bodyTooLarge() }

        let projectToken: String? =
            if let name = endpoint.projectTokenQueryItem {
                request.uri.queryParameters.get(name)
            } else {
                context.parameters.get("projectToken")
            }
        guard projectToken == configuration.projectToken else {
            return Self.failure(.unknownProject, "No project with token \(projectToken ?? "(none)").")
        }
        for item in endpoint.requiredQueryItems where request.uri.queryParameters.get(item.name) != item.value {
            return Self.failure(.invalidRequest, "\(endpoint.rawValue) requires the query item \(item.name)=\(item.value).")
        }

        switch authorization(request) {
        case .failure(let failure):
            return Self.failure(failure)
        case .success(.token(let key)):
            guard configuration.apiKeys.contains(key) else {
                return Self.failure(.invalidAPIKey, "The API key is not valid for this project.")
            }
            if configuration.bearerRequiredEndpoints.contains(endpoint) {
                return Self.failure(.bearerRequired, "\(endpoint.rawValue) requires a Bearer customer token.")
            }
            return try Self.json(.ok, EngagementSuccess(endpoint: endpoint.rawValue, scheme: "Token", subject: nil))
        case .success(.bearer(let token)):
            let verified: VerifiedToken
            switch await keyRing.verify(token, audience: configuration.audience, issuer: configuration.issuer) {
            case .failure(let failure): return Self.failure(failure)
            case .success(let value): verified = value
            }
            // The token stands for one customer: the body must name them, or nothing is checked.
            guard let registered = Self.registeredCustomer(in: body) else {
                return Self.failure(
                    .customerIdMissing,
                    "A customer token requires a JSON body naming the customer in customer_ids.registered (a non-empty string)."
                )
            }
            guard verified.subject == registered else {
                return Self.failure(.subjectMismatch, "The token subject does not match customer_ids.registered.")
            }
            return try Self.json(.ok, EngagementSuccess(endpoint: endpoint.rawValue, scheme: "Bearer", subject: verified.subject))
        }
    }

    /// `customer_ids.registered` of a JSON object body, when it is a non-empty string.
    static func registeredCustomer(in body: Data) -> String? {
        guard let object = JSONValue.object(from: body, maximumDepth: ReferenceBackend.maximumBodyJSONDepth),
            let registered = object["customer_ids"]?.objectValue?["registered"]?.stringValue,
            !registered.isEmpty
        else { return nil }
        return registered
    }

    private func roverTicketing(request: Request) async throws -> Response {
        guard case .success = try await record(request) else { return Self.bodyTooLarge() }
        switch authorization(request) {
        case .failure(let failure):
            return Self.failure(failure)
        case .success(.token):
            return Self.failure(.unsupportedScheme, "This endpoint requires a Bearer ID token.")
        case .success(.bearer(let token)):
            switch await keyRing.verify(token, audience: configuration.audience, issuer: configuration.issuer) {
            case .failure(let failure):
                return Self.failure(failure)
            case .success(let verified):
                let registered: Set<String> = ["sub", "iss", "aud", "exp", "iat", "nbf", "jti"]
                let custom = verified.claims.filter { !registered.contains($0.key) }.compactMapValues(\.stringValue)
                return try Self.json(.ok, RoverSuccess(subject: verified.subject, claims: custom))
            }
        }
    }

    // MARK: App login role

    /// The body of `POST /app/login` and `POST /app/braze-signature`.
    private struct MintRequest: Decodable {
        var userId: String
        var variant: TokenVariant?
        var lifetimeSeconds: Double?
        var audience: String?
        var issuer: String?
        var claims: [String: String]?
    }

    private struct LoginResponse: Encodable {
        var token: String
        var expiresAt: Int64?

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(token, forKey: .token)
            try container.encode(expiresAt, forKey: .expiresAt)
        }

        private enum CodingKeys: String, CodingKey { case token, expiresAt }
    }

    private func login(request: Request) async throws -> Response {
        let minted = try await mintRequested(
            request,
            defaultAudience: configuration.audience,
            defaultIssuer: configuration.issuer,
            now: Date(),
            header: (name: "Authorization", prefix: "Bearer ")
        )
        switch minted {
        case .refused(let response):
            return response
        case .minted(let token, let expiresAt):
            // Within the lifetime range `exp` is a small whole number: `Int64(exactly:)` never fails
            // here, and unlike `Int(_:)` it could not trap if it did.
            let expiresAt = expiresAt.flatMap { Int64(exactly: $0.timeIntervalSince1970.rounded(.down)) }
            return try Self.json(.ok, LoginResponse(token: token, expiresAt: expiresAt))
        }
    }

    /// What ``mintRequested(_:defaultAudience:defaultIssuer:now:header:)`` made of a request.
    enum Minted {
        /// The compact JWT and its `exp`.
        case minted(String, expiresAt: Date?)
        /// The `400` or `413` answer.
        case refused(Response)
    }

    /// Reads a mint request (`{"userId": String, "variant": optional TokenVariant, "lifetimeSeconds":
    /// optional number, "audience", "issuer": optional strings, "claims": optional string map}`)
    /// with the body limit and the bounded parser, checks it, and mints with the key ring. The
    /// token must fit `header.name` after `header.prefix` within
    /// ``ReferenceBackend/maximumAuthorizationHeaderSize`` bytes, or the answer is `400`.
    func mintRequested(
        _ request: Request,
        defaultAudience: String?,
        defaultIssuer: String?,
        now: Date,
        header: (name: String, prefix: String)
    ) async throws -> Minted {
        guard let body = try await Self.collectBody(request) else { return .refused(Self.bodyTooLarge()) }
        let range = ReferenceBackend.tokenLifetimeRange
        let lifetimeRule = "lifetimeSeconds must be a number of seconds in \(KeyRing.seconds(range.lowerBound))...\(KeyRing.seconds(range.upperBound))"
        // Read once by the bounded parser first, so the decoder below never sees deep nesting.
        guard (try? JSONValue.parse(body, maximumDepth: ReferenceBackend.maximumBodyJSONDepth)) != nil else {
            return .refused(Self.failure(
                .invalidRequest,
                "The body is not JSON (nesting at most \(ReferenceBackend.maximumBodyJSONDepth) levels, no repeated keys)."
            ))
        }
        let mint: MintRequest
        do {
            mint = try JSONDecoder().decode(MintRequest.self, from: body)
        } catch let DecodingError.typeMismatch(_, context) where context.codingPath.first?.stringValue == "lifetimeSeconds" {
            return .refused(Self.failure(.invalidRequest, lifetimeRule + "."))
        } catch let DecodingError.dataCorrupted(context) where context.codingPath.first?.stringValue == "lifetimeSeconds" {
            return .refused(Self.failure(.invalidRequest, lifetimeRule + "."))
        } catch {
            let variants = TokenVariant.allCases.map(\.rawValue).joined(separator: ", ")
            return .refused(Self.failure(
                .invalidRequest,
                "Expected {\"userId\": String, \"variant\": one of \(variants), \"lifetimeSeconds\": optional number}."
            ))
        }
        guard !mint.userId.isEmpty else {
            return .refused(Self.failure(.invalidRequest, "userId must not be empty."))
        }
        let lifetime = mint.lifetimeSeconds ?? configuration.tokenLifetime
        // Checked here, before anything is computed from it: 1e300 or -5 must not mint or trap.
        guard range.contains(lifetime) else {
            return .refused(Self.failure(.invalidRequest, lifetimeRule + "; got \(KeyRing.seconds(lifetime))."))
        }
        let minted = try keyRing.mint(
            userId: mint.userId,
            variant: mint.variant ?? .valid,
            lifetime: lifetime,
            audience: mint.audience ?? defaultAudience,
            issuer: mint.issuer ?? defaultIssuer,
            claims: mint.claims ?? [:],
            now: now
        )
        let limit = ReferenceBackend.maximumAuthorizationHeaderSize
        guard minted.token.utf8.count + header.prefix.utf8.count <= limit else {
            return .refused(Self.failure(
                .invalidRequest,
                "The token would not fit the \(limit)-byte \(header.name) header limit; send a shorter userId or fewer claims."
            ))
        }
        return .minted(minted.token, expiresAt: minted.expiresAt)
    }

    // MARK: Helpers

    private enum Credential {
        case token(String)
        case bearer(String)
    }

    /// Reads the `Authorization` header: `Token <key>` or `Bearer <jwt>` (scheme case-insensitive).
    /// A header longer than ``ReferenceBackend/maximumAuthorizationHeaderSize`` bytes is refused
    /// before it is looked at.
    private func authorization(_ request: Request) -> Result<Credential, AuthFailure> {
        guard let header = request.headers[.authorization] else {
            return .failure(AuthFailure(code: .missingAuthorization, message: "The request has no Authorization header."))
        }
        guard header.utf8.count <= ReferenceBackend.maximumAuthorizationHeaderSize else {
            return .failure(AuthFailure(
                code: .tokenTooLarge,
                message: "The Authorization header is longer than \(ReferenceBackend.maximumAuthorizationHeaderSize) bytes."
            ))
        }
        let scheme = header.prefix { $0 != " " }
        let credential = header.dropFirst(scheme.count).trimmingCharacters(in: .whitespaces)
        switch scheme.lowercased() {
        case "token":
            return .success(.token(credential))
        case "bearer":
            guard !credential.isEmpty else {
                return .failure(AuthFailure(code: .malformedToken, message: "The Bearer credential is empty."))
            }
            return .success(.bearer(credential))
        default:
            let shown = scheme.count <= 16 ? String(scheme) : String(scheme.prefix(16)) + "…"
            return .failure(AuthFailure(code: .unsupportedScheme, message: "Authorization scheme \(shown) is not supported; use Token or Bearer."))
        }
    }

    /// The body as read, or `nil` when it is longer than ``ReferenceBackend/maximumRequestBodySize``.
    static func collectBody(_ request: Request) async throws -> Data? {
        do {
            let buffer = try await request.body.collect(upTo: ReferenceBackend.maximumRequestBodySize)
            return Data(buffer.readableBytesView)
        } catch let error as any HTTPResponseError where error.status == .contentTooLarge {
            return nil
        }
    }

    static func bodyTooLarge() -> Response {
        failure(.bodyTooLarge, "The request body is longer than \(ReferenceBackend.maximumRequestBodySize) bytes.")
    }

    struct BodyTooLarge: Error {}

    /// Records the request and returns its body; a body over the limit is refused and not recorded.
    func record(_ request: Request) async throws -> Result<Data, BodyTooLarge> {
        guard let data = try await Self.collectBody(request) else { return .failure(BodyTooLarge()) }
        let body = String(decoding: data, as: UTF8.self)
        requestLog.append(
            RecordedRequest(
                method: request.method.rawValue,
                path: request.uri.path,
                query: request.uri.query,
                authorization: request.headers[.authorization],
                signature: request.headers.brazeAuthSignature,
                // HTTPTypes keeps `Host` as the request's authority, not as a header field.
                headerNames: (request.head.authority == nil ? [] : ["host"]) + request.headers.map(\.name.canonicalName),
                body: body
            )
        )
        return .success(data)
    }

    private struct EngagementSuccess: Encodable {
        var success = true
        var endpoint: String
        var scheme: String
        var subject: String?

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(success, forKey: .success)
            try container.encode(endpoint, forKey: .endpoint)
            try container.encode(scheme, forKey: .scheme)
            try container.encode(subject, forKey: .subject)
        }

        private enum CodingKeys: String, CodingKey { case success, endpoint, scheme, subject }
    }

    private struct RoverSuccess: Encodable {
        var success = true
        var subject: String?
        var claims: [String: String]

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(success, forKey: .success)
            try container.encode(subject, forKey: .subject)
            try container.encode(claims, forKey: .claims)
        }

        private enum CodingKeys: String, CodingKey { case success, subject, claims }
    }

    private struct Failure: Encodable {
        var success = false
        var error: String
        var message: String
    }

    static func failure(_ failure: AuthFailure) -> Response {
        Self.failure(failure.code, failure.message)
    }

    static func failure(_ code: ReferenceBackend.ErrorCode, _ message: String) -> Response {
        let status = HTTPResponse.Status(code: code.httpStatus)
        do {
            return try json(status, Failure(error: code.rawValue, message: message))
        } catch {
            return Response(status: status)
        }
    }

    static func json(_ status: HTTPResponse.Status, _ value: some Encodable) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(value)
        return Response(
            status: status,
            headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: data))
        )
    }
}
