import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import SDKAuthorization

/// The README's first example ("Quick start"), verbatim inside a namespace: the root test
/// `quickStartInTheREADMEIsTheSamplesCode` checks that the README says the same, and
/// ``QuickStartSample`` runs it against the reference backend in the demo and the end-to-end tests.
public enum QuickStart {
    // Requests to your API's host carry `Authorization: Bearer <token>`; no other request carries anything.
    static func makeAuthorizer(apiHost: String, accessToken: @escaping @Sendable () async throws -> String) throws -> RequestAuthorizer {
        try RequestAuthorizer(host: apiHost, bearerToken: accessToken)
    }

    // Send through your app's URLSession: its pinning, proxies and delegate stay yours.
    static func fetchProfile(_ authorizer: RequestAuthorizer, url: URL, session: URLSession = .shared) async throws -> (Data, HTTPURLResponse) {
        try await authorizer.data(for: URLRequest(url: url), using: session)
    }

    // The same authorizer with each piece named: for more hosts or paths, or a provider of your own.
    // 1. A provider: the credential for each request that needs one, here your login's access token.
    struct AccessTokenProvider: AuthorizationProvider {
        let accessToken: @Sendable () async throws -> String
        func credential(for context: AuthorizationContext) async throws -> Credential {
            .bearer(try await accessToken())   // 2. A credential: Authorization: Bearer <token>
        }
    }

    // 3. A rule: requests to your API's host carry the token. 4. The policy: the rules, in order.
    // 5. The authorizer: the policy, and a provider for each scheme its rules name.
    static func makeAuthorizerPieceByPiece(apiHost: String, accessToken: @escaping @Sendable () async throws -> String) throws -> RequestAuthorizer {
        try RequestAuthorizer(
            policy: AuthorizationPolicy(rules: [AuthorizationRule(host: apiHost, scheme: .bearer)]),
            providers: [.bearer: AccessTokenProvider(accessToken: accessToken)]
        )
    }
}

/// Runs the README's quick start against the reference backend: the rule names the backend's origin
/// (`http://127.0.0.1:<port>`, which a rule may name because it is loopback), the provider logs a
/// user in at the app server, and the request goes through `URLSession` to `GET /rover/ticketing`,
/// which verifies the JWT. The same request to the backend under its other loopback name, which no
/// rule names, goes without the token and is refused.
public enum QuickStartSample {
    public static func run(_ environment: SampleEnvironment) async throws -> [ReportRow] {
        guard let host = environment.baseURL.host, let port = environment.baseURL.port else {
            throw SampleError("the backend URL names no host and port: \(environment.baseURL)")
        }
        let origin = "\(environment.baseURL.scheme ?? "http")://\(host):\(port)"
        let authorizer = try QuickStart.makeAuthorizer(apiHost: origin) {
            try await AppServer.login(baseURL: environment.baseURL, userId: "reader-quick-start")
        }
        var rows: [ReportRow] = []

        // The rule's host: the request carries the user's token and the server verifies it.
        let (data, response) = try await QuickStart.fetchProfile(authorizer, url: environment.baseURL.appendingPathComponent("rover/ticketing"))
        struct Profile: Decodable { let subject: String? }
        let subject = (try? JSONDecoder().decode(Profile.self, from: data))?.subject
        rows.append(ReportRow(mode: "quick start (README)", endpoint: "GET /rover/ticketing",
                              header: redactedHeader(try await lastAuthorizationHeader(environment)),
                              verdict: response.statusCode == 200 ? "200 accepted, sub \(subject ?? "?")" : "\(response.statusCode) \(serverErrorCode(data))",
                              asExpected: response.statusCode == 200 && subject == "reader-quick-start"))

        // Another host (the same server under its other loopback name): no rule, no token.
        let otherName = ["127.0.0.1": "localhost", "localhost": "127.0.0.1"][host]
        if let otherName {
            let elsewhere = URL(string: "\(environment.baseURL.scheme ?? "http")://\(otherName):\(port)/rover/ticketing")!
            let verdict: String
            var refused = false
            do {
                let (body, response) = try await QuickStart.fetchProfile(authorizer, url: elsewhere)
                verdict = "\(response.statusCode) \(serverErrorCode(body))"
            } catch let error as RequestError {
                verdict = error.statusCode.map { "\($0) \(serverErrorCode(error.body))" } ?? "failed: \(error)"
                refused = error.statusCode == 401
            }
            let header = try await lastAuthorizationHeader(environment)
            rows.append(ReportRow(mode: "quick start: host no rule names", endpoint: "GET \(otherName) /rover/ticketing",
                                  header: redactedHeader(header), verdict: verdict, asExpected: refused && header == nil))
        }
        return rows
    }

    /// The `Authorization` header of the last request the backend received (from its test route `/__records`).
    static func lastAuthorizationHeader(_ environment: SampleEnvironment) async throws -> String? {
        struct Record: Decodable { let authorization: String? }
        let (data, _) = try await URLSession.shared.data(from: environment.baseURL.appendingPathComponent("__records"))
        return try JSONDecoder().decode([Record].self, from: data).last?.authorization
    }
}
