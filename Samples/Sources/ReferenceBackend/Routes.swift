import Foundation
import Hummingbird

/// The HTTP routes: the nine Engagement endpoints, `GET /rover/ticketing`, `POST /app/login` and
/// `GET /__records`.
struct Routes: Sendable {
    let configuration: ReferenceBackend.Configuration
    let keyRing: KeyRing
    let requestLog: RequestLog

    /// The largest request body read; larger bodies are refused by Hummingbird with 413.
    static let maximumBodySize = 1 << 20

    func register(on router: Router<BasicRequestContext>) {
        for endpoint in EngagementEndpoint.allCases {
            router.post(RouterPath(endpoint.routePath)) { request, context in
                try await self.engagement(endpoint, request: request, context: context)
            }
        }
        router.get("/rover/ticketing") { request, _ in
            try await self.roverTicketing(request: request)
        }
        router.post("/app/login") { request, _ in
            try await self.login(request: request)
        }
        router.get("/__records") { _, _ in
            try Self.json(.ok, requestLog.all())
        }
        // A redirect to any URL (`?to=<absolute URL>&status=307`), for testing that clients
        // drop the Authorization header when a redirect leaves the host. Recorded like the others.
        router.on("/__redirect", method: .post) { request, _ in try await self.redirect(request) }
        router.on("/__redirect", method: .get) { request, _ in try await self.redirect(request) }
    }

    private func redirect(_ request: Request) async throws -> Response {
        _ = try await record(request)
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
        let body = try await record(request)

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
            if let registered = JSONValue.object(from: Data(body.utf8))?["customer_ids"]?.objectValue?["registered"]?.stringValue,
                verified.subject != registered
            {
                return Self.failure(.subjectMismatch, "The token subject does not match customer_ids.registered.")
            }
            return try Self.json(.ok, EngagementSuccess(endpoint: endpoint.rawValue, scheme: "Bearer", subject: verified.subject))
        }
    }

    private func roverTicketing(request: Request) async throws -> Response {
        _ = try await record(request)
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

    private struct LoginRequest: Decodable {
        var userId: String
        var variant: TokenVariant?
        var lifetimeSeconds: Double?
        var audience: String?
        var issuer: String?
        var claims: [String: String]?
    }

    private struct LoginResponse: Encodable {
        var token: String
        var expiresAt: Int?

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(token, forKey: .token)
            try container.encode(expiresAt, forKey: .expiresAt)
        }

        private enum CodingKeys: String, CodingKey { case token, expiresAt }
    }

    private func login(request: Request) async throws -> Response {
        let buffer = try await request.body.collect(upTo: Self.maximumBodySize)
        let login: LoginRequest
        do {
            login = try JSONDecoder().decode(LoginRequest.self, from: Data(buffer.readableBytesView))
        } catch {
            let variants = TokenVariant.allCases.map(\.rawValue).joined(separator: ", ")
            return Self.failure(.invalidRequest, "Expected {\"userId\": String, \"variant\": one of \(variants)}.")
        }
        let minted = try keyRing.mint(
            userId: login.userId,
            variant: login.variant ?? .valid,
            lifetime: login.lifetimeSeconds ?? configuration.tokenLifetime,
            audience: login.audience ?? configuration.audience,
            issuer: login.issuer ?? configuration.issuer,
            claims: login.claims ?? [:]
        )
        return try Self.json(.ok, LoginResponse(token: minted.token, expiresAt: minted.expiresAt.map { Int($0.timeIntervalSince1970) }))
    }

    // MARK: Helpers

    private enum Credential {
        case token(String)
        case bearer(String)
    }

    /// Reads the `Authorization` header: `Token <key>` or `Bearer <jwt>` (scheme case-insensitive).
    private func authorization(_ request: Request) -> Result<Credential, AuthFailure> {
        guard let header = request.headers[.authorization] else {
            return .failure(AuthFailure(code: .missingAuthorization, message: "The request has no Authorization header."))
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

    /// Records the request and returns its body as a string.
    private func record(_ request: Request) async throws -> String {
        let buffer = try await request.body.collect(upTo: Self.maximumBodySize)
        let body = String(decoding: buffer.readableBytesView, as: UTF8.self)
        requestLog.append(
            RecordedRequest(
                method: request.method.rawValue,
                path: request.uri.path,
                query: request.uri.query,
                authorization: request.headers[.authorization],
                // HTTPTypes keeps `Host` as the request's authority, not as a header field.
                headerNames: (request.head.authority == nil ? [] : ["host"]) + request.headers.map(\.name.canonicalName),
                body: body
            )
        )
        return body
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
