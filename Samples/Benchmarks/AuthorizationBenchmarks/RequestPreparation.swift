// Benchmark 1: request preparation per mode, through the client with an in-memory transport, against
// its floor: the same URLRequest built by hand. Both sides run in the same process, in alternating
// order, round after round; each round reports subject time / floor time.
import Benchmark
import BenchmarkSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import SDKAuthorization
import SDKAuthorizationModeKit
import SDKAuthorizationEngagement
import SDKAuthorizationSignature

/// The Exponea provider shape: a class found by name, asked synchronously on its own queue.
final class BenchmarkProviderClass: NSObject, AuthorizationProviderType {
    static let token = BenchmarkJWT.make()
    required override init() {}
    func getAuthorizationToken() -> String? { Self.token }
}

/// An async provider that answers from a serial dispatch queue, one hop there and back per call.
struct QueueHopProvider: AuthorizationProvider {
    let token: String
    private let queue = DispatchQueue(label: "benchmark.queue-hop")
    init(token: String) { self.token = token }
    func credential(for context: AuthorizationContext) async throws -> Credential {
        let token = token
        return await withCheckedContinuation { continuation in queue.async { continuation.resume(returning: .bearer(token)) } }
    }
}

/// One mode's client, the request it sends, and the URLRequest a hand-written SDK would build for it.
struct PreparationCase: Sendable {
    let name: String
    let send: @Sendable () async throws -> Void
    let floor: @Sendable () -> Void
}

enum PreparationFixtures {
    static let projectToken = "bench-project-token"
    static let apiKey = "bench-api-key-0123456789"
    static let baseURL = "https://api.exponea.com"
    static let token = BenchmarkJWT.make()
    static let body = Data(#"{"customer_ids":{"registered":"user-42"}}"#.utf8)
    static let trackEventsURL = URL(string: "\(baseURL)/track/v2/projects/\(projectToken)/customers/events")!
    static let inboxURL = URL(string: "\(baseURL)/webxp/projects/\(projectToken)/appinbox/fetch")!
    static let signatureURL = URL(string: "https://sdk.iad-01.braze.com/api/v3/data")!

    static func configuration(advancedAuth: Bool) throws -> AuthorizationConfiguration {
        try AuthorizationConfiguration(
            projectToken: projectToken, baseURL: baseURL, authorization: "Token \(apiKey)", advancedAuthEnabled: advancedAuth
        )
    }

    static func bearerFloor() {
        blackHole(handBuiltRequest(url: inboxURL, method: "POST", headerName: "Authorization", headerValue: "Bearer \(token)", body: body))
    }

    static func apiKeyCase() throws -> PreparationCase {
        let client = try AuthorizedHTTPClient(configuration: configuration(advancedAuth: false), transport: InstantTransport(), diagnostics: QuietSink())
        return PreparationCase(
            name: "API key",
            send: { _ = try await client.send(.trackEvents, body: body) },
            floor: { blackHole(handBuiltRequest(url: trackEventsURL, method: "POST", headerName: "Authorization", headerValue: "Token \(apiKey)", body: body)) }
        )
    }

    /// The API-key request through a transport that says nothing of deadlines, as an SDK's own
    /// transport does unless its author opts in: the default path.
    static func apiKeySilentTransport() throws -> PreparationCase {
        let client = try AuthorizedHTTPClient(configuration: configuration(advancedAuth: false), transport: SilentTransport(), diagnostics: QuietSink())
        return PreparationCase(
            name: "API key, transport that declares nothing",
            send: { _ = try await client.send(.trackEvents, body: body) },
            floor: { blackHole(handBuiltRequest(url: trackEventsURL, method: "POST", headerName: "Authorization", headerValue: "Token \(apiKey)", body: body)) }
        )
    }

    static func bearerAsync() throws -> PreparationCase {
        let client = try AuthorizedHTTPClient(
            configuration: configuration(advancedAuth: true), provider: FixedTokenProvider(token: token),
            transport: InstantTransport(), diagnostics: QuietSink()
        )
        return PreparationCase(name: "bearer, async provider", send: { _ = try await client.send(.appInboxFetch, body: body) }, floor: bearerFloor)
    }

    /// The whole default path: an app's async provider and an SDK's own transport, neither saying
    /// anything of deadlines, so the client bounds both the provider's answer and the send itself.
    static func bearerAsyncSilentTransport() throws -> PreparationCase {
        let client = try AuthorizedHTTPClient(
            configuration: configuration(advancedAuth: true), provider: FixedTokenProvider(token: token),
            transport: SilentTransport(), diagnostics: QuietSink()
        )
        return PreparationCase(name: "bearer, async provider and transport that declare nothing", send: { _ = try await client.send(.appInboxFetch, body: body) },
                               floor: bearerFloor)
    }

    static func bearerAsyncEndingByDeadline() throws -> PreparationCase {
        let client = try AuthorizedHTTPClient(
            configuration: configuration(advancedAuth: true), provider: FixedTokenProvider(token: token, endsByDeadline: true),
            transport: InstantTransport(), diagnostics: QuietSink()
        )
        return PreparationCase(name: "bearer, async provider that ends by the deadline", send: { _ = try await client.send(.appInboxFetch, body: body) },
                               floor: bearerFloor)
    }

    /// The least a provider that must leave the cooperative pool can cost: an async provider whose
    /// every call hops to a serial dispatch queue and back, written by hand.
    static func bearerQueueHop() throws -> PreparationCase {
        let client = try AuthorizedHTTPClient(
            configuration: configuration(advancedAuth: true), provider: QueueHopProvider(token: token),
            transport: InstantTransport(), diagnostics: QuietSink()
        )
        return PreparationCase(name: "bearer, hand-written queue hop", send: { _ = try await client.send(.appInboxFetch, body: body) }, floor: bearerFloor)
    }

    static func bearerClass() throws -> PreparationCase {
        let registry = ProviderRegistry()
        registry.register(BenchmarkProviderClass.self, as: "ExponeaAuthProvider")
        let client = try AuthorizedHTTPClient(
            configuration: configuration(advancedAuth: true), registry: registry, transport: InstantTransport(), diagnostics: QuietSink()
        )
        return PreparationCase(name: "bearer, provider class", send: { _ = try await client.send(.appInboxFetch, body: body) }, floor: bearerFloor)
    }

    static func bearerCaching() throws -> PreparationCase {
        let client = try AuthorizedHTTPClient(
            configuration: configuration(advancedAuth: true),
            provider: CachingAuthorizationProvider(wrapping: FixedTokenProvider(token: token)),
            transport: InstantTransport(), diagnostics: QuietSink()
        )
        return PreparationCase(name: "bearer, caching provider", send: { _ = try await client.send(.appInboxFetch, body: body) }, floor: bearerFloor)
    }

    /// Signature mode (SignatureAuthentication): the current user's signature in `X-Braze-Auth-Signature`.
    static func signature() throws -> PreparationCase {
        let authentication = try SignatureAuthentication(diagnostics: QuietSink())
        try authentication.changeUser("user-42", signature: token)
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(host: "*.braze.com", scheme: .signature))
        let authorizer = try RequestAuthorizer(policy: policy, providers: [.signature: authentication], diagnostics: QuietSink())
        let client = AuthorizedHTTPClient(authorizer: authorizer, transport: InstantTransport())
        let request = OutgoingRequest(method: "POST", url: signatureURL, headers: ["Content-Type": "application/json"], body: body)
        return PreparationCase(
            name: "signature mode",
            send: { _ = try await client.send(request) },
            floor: { blackHole(handBuiltRequest(url: signatureURL, method: "POST", headerName: "X-Braze-Auth-Signature", headerValue: token, body: body)) }
        )
    }
}

func requestPreparationBenchmarks() {
    let operations = BenchmarkSettings.pick(full: 2_000, quick: 50)
    let rounds = BenchmarkSettings.pick(full: 30, quick: 1)
    let cases: [(String, @Sendable () throws -> PreparationCase)] = [
        ("API key", PreparationFixtures.apiKeyCase),
        ("bearer, async provider", PreparationFixtures.bearerAsync),
        ("bearer, async provider that ends by the deadline", PreparationFixtures.bearerAsyncEndingByDeadline),
        ("bearer, provider class", PreparationFixtures.bearerClass),
        ("bearer, caching provider", PreparationFixtures.bearerCaching),
        ("signature mode", PreparationFixtures.signature),
        ("API key, transport that declares nothing", PreparationFixtures.apiKeySilentTransport),
        ("bearer, async provider and transport that declare nothing", PreparationFixtures.bearerAsyncSilentTransport),
    ]
    for (name, make) in cases {
        let metrics = PairedMetrics(subject: "client.send", floor: "URLRequest by hand")
        Benchmark("1 prepare: \(name) vs URLRequest by hand", configuration: BenchmarkSettings.rounds(rounds, metrics: metrics.all)) { benchmark in
            do {
                let fixture = try make()
                try await pairedRound(benchmark, metrics: metrics, operations: operations) {
                    for _ in 0..<operations { try await fixture.send() }
                } floor: {
                    for _ in 0..<operations { fixture.floor() }
                }
            } catch {
                benchmark.fail(error)
            }
        }
    }

    // The same API-key request found in the catalogue by method and URL (every route of the Engagement
    // catalogue tried, the path decoded once) against the same request named by its endpoint.
    let matchMetrics = PairedMetrics(subject: "matched by URL", floor: "named by endpoint")
    Benchmark("1 prepare: API key matched by URL vs named by endpoint", configuration: BenchmarkSettings.rounds(rounds, metrics: matchMetrics.all)) { benchmark in
        do {
            let client = try AuthorizedHTTPClient(configuration: PreparationFixtures.configuration(advancedAuth: false), transport: InstantTransport(),
                                                  diagnostics: QuietSink())
            let request = OutgoingRequest(method: "POST", url: PreparationFixtures.trackEventsURL, headers: ["Content-Type": "application/json"],
                                          body: PreparationFixtures.body)
            try await pairedRound(benchmark, metrics: matchMetrics, operations: operations) {
                for _ in 0..<operations { _ = try await client.send(request) }
            } floor: {
                for _ in 0..<operations { _ = try await client.send(.trackEvents, body: PreparationFixtures.body) }
            }
        } catch {
            benchmark.fail(error)
        }
    }

    // What URLSessionHTTPTransport does to every request before URLSession sees it (OutgoingRequest to
    // URLRequest), against the same URLRequest built by hand: the authorized API-key request, its
    // method, URL, body, Content-Type and Authorization. Neither side sends anything.
    let conversionMetrics = PairedMetrics(subject: "URLSessionHTTPTransport's conversion", floor: "URLRequest by hand")
    Benchmark("1 prepare: URLSessionHTTPTransport's conversion vs URLRequest by hand",
              configuration: BenchmarkSettings.rounds(rounds, metrics: conversionMetrics.all)) { benchmark in
        do {
            let url = PreparationFixtures.trackEventsURL, body = PreparationFixtures.body, value = "Token \(PreparationFixtures.apiKey)"
            let request = OutgoingRequest(method: "POST", url: url, headers: ["Content-Type": "application/json", "Authorization": value], body: body)
            try await pairedRound(benchmark, metrics: conversionMetrics, operations: operations) {
                for _ in 0..<operations { blackHole(URLRequest(request)) }
            } floor: {
                for _ in 0..<operations { blackHole(handBuiltRequest(url: url, method: "POST", headerName: "Authorization", headerValue: value, body: body)) }
            }
        } catch {
            benchmark.fail(error)
        }
    }

    // The synchronous provider against the async one, one request at a time and under 32 concurrent
    // requests: the cost of keeping blocking calls off the cooperative pool. And against the least
    // such a hop can cost: an async provider that hops to a dispatch queue and back, written by hand.
    // Context switches are counted: each hand-off to a sleeping thread is one.
    let floors: [(String, @Sendable () throws -> PreparationCase)] = [
        ("async provider", PreparationFixtures.bearerAsync),
        ("hand-written queue hop", PreparationFixtures.bearerQueueHop),
    ]
    for concurrency in [1, 32] {
        for (floorName, makeFloor) in floors {
            let metrics = PairedMetrics(subject: "provider class", floor: floorName, countsContextSwitches: true)
            let shape = concurrency == 1 ? "one at a time" : "\(concurrency) concurrent"
            Benchmark(
                "1 prepare: bearer, provider class vs \(floorName), \(shape)",
                configuration: BenchmarkSettings.rounds(rounds, metrics: metrics.all)
            ) { benchmark in
                do {
                    let send = try PreparationFixtures.bearerClass().send, floor = try makeFloor().send
                    try await pairedRound(benchmark, metrics: metrics, operations: operations) {
                        try await concurrently(operations, concurrency: concurrency, send)
                    } floor: {
                        try await concurrently(operations, concurrency: concurrency, floor)
                    }
                } catch {
                    benchmark.fail(error)
                }
            }
        }
    }
}
