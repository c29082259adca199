import Foundation
import SDKAuthorization
import SDKAuthorizationEngagement
import SDKAuthorizationIDToken
import Synchronization

/// Refresh-callback mode: the app sets an ID token, and the framework asks for a new one (and
/// holds the request up to 10 seconds) when it is missing, stale or rejected.
public enum RefreshCallbackModeSample {
    public static func run(_ environment: SampleEnvironment) async throws -> [ReportRow] {
        // The backend's origin, its scheme and port included (http://127.0.0.1:<port> for the embedded one).
        let idTokens = try IDTokenStore(authorizedDomains: [AuthorizedDomain(origin: environment.baseURL)])
        let refreshes = RefreshCounter()
        idTokens.registerRefreshCallback {
            // The app refreshes with its own server, then hands the token over.
            refreshes.increment()
            if let token = try? await AppServer.login(baseURL: environment.baseURL, userId: "fan-7") {
                try? idTokens.setIDToken(token)
            }
        }

        let registry = ProviderRegistry()
        registry.register(name: "RoverIDToken", provider: idTokens)
        var policy = AuthorizationPolicy()
        try policy.add(Endpoint("ticketing", method: "GET", path: "/rover/ticketing"), scheme: .bearer)
        // The same server under its other loopback name, which is not an authorized domain.
        let otherName = ["127.0.0.1": "localhost", "localhost": "127.0.0.1"][environment.baseURL.host ?? ""]
        if let otherName, let port = environment.baseURL.port {
            try policy.add(Endpoint("elsewhere", method: "GET", path: "http://\(otherName):\(port)/rover/ticketing"), scheme: .bearer)
        }
        let transport = ObservedTransport()
        let client = try AuthorizedHTTPClient(
            configuration: AuthorizationConfiguration(
                projectToken: environment.projectToken,
                baseURL: environment.baseURL.absoluteString,
                authorization: nil,
                advancedAuthEnabled: true,
                providerLookup: .implicitName("RoverIDToken")
            ),
            policy: policy,
            registry: registry,
            transport: transport
        )

        var rows: [ReportRow] = []
        func record(_ note: String, expectedRefreshes: Int) async {
            let outcome = await Result { () async throws(RequestError) in try await client.send("ticketing") }
            rows.append(ReportRow(mode: "refresh callback (\(note))", endpoint: "GET /rover/ticketing",
                                  header: redactedHeader(transport.lastAuthorizationHeader), verdict: verdict(outcome),
                                  asExpected: (try? outcome.get()) != nil && refreshes.count == expectedRefreshes))
        }

        // No token yet: five concurrent requests wait for one refresh, then all go out with it.
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<5 { group.addTask { _ = try? await client.send("ticketing") } }
        }
        await record("5 waited on 1 refresh", expectedRefreshes: 1)
        // The app set an expired token: it does not count; the request waits for a fresh one.
        try idTokens.setIDToken(try await AppServer.login(baseURL: environment.baseURL, userId: "fan-7", variant: "expired"))
        await record("stale token replaced", expectedRefreshes: 2)
        // The server rejects a token the app thought good (signed by another key): 401, one refresh, one retry.
        try idTokens.setIDToken(try await AppServer.login(baseURL: environment.baseURL, userId: "fan-7", variant: "wrongKey"))
        await record("401, refreshed, retried", expectedRefreshes: 3)
        // A host outside the authorized domains never sees the token: the server refuses the bare request.
        if let otherName {
            let outcome = await Result { () async throws(RequestError) in try await client.send("elsewhere") }
            let text = verdict(outcome)
            rows.append(ReportRow(mode: "refresh callback (unauthorized host)", endpoint: "GET \(otherName)/rover/ticketing",
                                  header: redactedHeader(transport.lastAuthorizationHeader), verdict: text,
                                  asExpected: transport.lastAuthorizationHeader == nil && text == "401 missing_authorization"))
        }
        return rows
    }
}

final class RefreshCounter: Sendable {
    private let value = Mutex(0)
    func increment() { value.withLock { $0 += 1 } }
    var count: Int { value.withLock { $0 } }
}
