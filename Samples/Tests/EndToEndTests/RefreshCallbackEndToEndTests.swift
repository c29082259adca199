import AuthorizationSamples
import Foundation
import ReferenceBackend
import SDKAuthorization
import SDKAuthorizationEngagement
import SDKAuthorizationIDToken
import SDKAuthorizationTesting
import Synchronization
import Testing

@Suite("Refresh-callback mode end to end", .timeLimit(.minutes(3)))
struct RefreshCallbackEndToEndTests {
    /// A client for GET /rover/ticketing with an ID-token store authorized for the backend's host.
    func client(for environment: SampleEnvironment, store: IDTokenStore) throws -> AuthorizedHTTPClient {
        let registry = ProviderRegistry()
        registry.register(name: "RoverIDToken", provider: store)
        var policy = AuthorizationPolicy()
        try policy.add(Endpoint("ticketing", method: "GET", path: "/rover/ticketing"), scheme: .bearer)
        return try AuthorizedHTTPClient(
            configuration: AuthorizationConfiguration(
                projectToken: environment.projectToken, baseURL: environment.baseURL.absoluteString, authorization: nil,
                advancedAuthEnabled: true, providerLookup: .implicitName("RoverIDToken")
            ),
            policy: policy, registry: registry, diagnostics: RecordingDiagnosticsSink()
        )
    }

    /// A store authorized for the backend's origin whose refresh callback logs `fan-7` in at the app
    /// server and sets the new token, counting its invocations.
    func refreshingStore(_ environment: SampleEnvironment, refreshes: Counter) throws -> IDTokenStore {
        let store = try IDTokenStore(authorizedDomains: [AuthorizedDomain(origin: environment.baseURL)], diagnostics: RecordingDiagnosticsSink())
        store.registerRefreshCallback {
            refreshes.increment()
            if let token = try? await AppServer.login(baseURL: environment.baseURL, userId: "fan-7") {
                try? store.setIDToken(token)
            }
        }
        return store
    }

    @Test func concurrentRequestsWithoutATokenShareOneRefreshAndAllCarryItsToken() async throws {
        try await withEnvironment { environment, backend in
            let refreshes = Counter()
            let store = try refreshingStore(environment, refreshes: refreshes)
            let client = try client(for: environment, store: store)
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<20 { group.addTask { try await client.send("ticketing").statusCode } }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses == Array(repeating: 200, count: 20))
            #expect(refreshes.count == 1)
            let headers = Set(await backend.records().map(\.authorization))
            #expect(headers.count == 1)
            #expect(headers.first??.hasPrefix("Bearer ") == true)
        }
    }

    @Test func serverRejectionTriggersOneRefreshAndOneRetryWithTheNewToken() async throws {
        try await withEnvironment { environment, backend in
            let refreshes = Counter()
            let store = try refreshingStore(environment, refreshes: refreshes)
            let forged = try await AppServer.login(baseURL: environment.baseURL, userId: "fan-7", variant: "wrongKey")
            try store.setIDToken(forged)
            let response = try await client(for: environment, store: store).send("ticketing")
            #expect(String(decoding: response.body, as: UTF8.self).contains(#""subject":"fan-7""#))
            let headers = await backend.records().map(\.authorization)
            #expect(headers.count == 2)
            #expect(headers.first == "Bearer \(forged)")
            #expect(headers.last != headers.first)
            #expect(refreshes.count == 1)
        }
    }

    @Test func refreshThatNeverComesSendsWithoutTokenAndTheServerRefusesIt() async throws {
        try await withEnvironment { environment, backend in
            let store = try IDTokenStore(
                authorizedDomains: [AuthorizedDomain(origin: environment.baseURL)],
                options: .init(refreshTimeout: 0.2),
                diagnostics: RecordingDiagnosticsSink()
            )
            let result = await outcome(try client(for: environment, store: store), "ticketing")
            guard case .failure(let error) = result else { Issue.record("accepted without a token"); return }
            #expect(rejection(error)?.code == "missing_authorization")
            #expect(await backend.records().map(\.authorization) == [nil])
        }
    }

    @Test func hostOutsideTheAuthorizedDomainsReceivesNoTokenOverRealHTTP() async throws {
        try await withEnvironment { environment, backend in
            let port = try #require(environment.baseURL.port)
            // The pattern names the backend's scheme and port: it listens on http and a random port.
            let store = try IDTokenStore(authorizedDomains: ["http://127.0.0.1:\(port)"], diagnostics: RecordingDiagnosticsSink())
            try store.setIDToken(try await AppServer.login(baseURL: environment.baseURL, userId: "fan-7"))
            let registry = ProviderRegistry()
            registry.register(name: "RoverIDToken", provider: store)
            var policy = AuthorizationPolicy()
            try policy.add(Endpoint("authorized", method: "GET", path: "/rover/ticketing"), scheme: .bearer)
            // The same server under another host name: the token must not go there.
            try policy.add(Endpoint("elsewhere", method: "GET", path: "http://localhost:\(port)/rover/ticketing"), scheme: .bearer)
            let client = try AuthorizedHTTPClient(
                configuration: AuthorizationConfiguration(
                    projectToken: environment.projectToken, baseURL: environment.baseURL.absoluteString, authorization: nil,
                    advancedAuthEnabled: true, providerLookup: .implicitName("RoverIDToken")
                ),
                policy: policy, registry: registry, diagnostics: RecordingDiagnosticsSink()
            )
            #expect(try await client.send("authorized").statusCode == 200)
            let elsewhere = await outcome(client, "elsewhere")
            guard case .failure(let error) = elsewhere else { Issue.record("accepted without a token"); return }
            #expect(rejection(error)?.code == "missing_authorization")
            let headers = await backend.records().map(\.authorization)
            #expect(headers.count == 2)
            #expect(headers.first??.hasPrefix("Bearer ") == true)
            #expect(headers.last == .some(nil))
        }
    }

    @Test func theSampleDrivesTheModeAsExpected() async throws {
        try await withEnvironment { environment, _ in
            let rows = try await RefreshCallbackModeSample.run(environment)
            #expect(rows.count == 4)
            #expect(rows.last?.header == "(none)")
            for row in rows { #expect(row.asExpected, "\(row.mode): \(row.verdict)") }
        }
    }
}

final class Counter: Sendable {
    private let value = Mutex(0)
    func increment() { value.withLock { $0 += 1 } }
    var count: Int { value.withLock { $0 } }
}
