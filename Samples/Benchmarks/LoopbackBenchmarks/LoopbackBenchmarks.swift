// Benchmark 2: requests per second through AuthorizedHTTPClient (its default URLSession transport)
// against plain URLSession with the header set by hand, to the same loopback endpoint of the
// reference backend (Hummingbird, started in this process), at concurrency 1 and 32. Rounds alternate
// the two sides; each round reports client time / URLSession time for the same number of requests.
//
//   swift package --package-path Samples benchmark --target LoopbackBenchmarks
import Benchmark
import BenchmarkSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ReferenceBackend
import SDKAuthorization
import SDKAuthorizationEngagement

enum LoopbackFixtures {
    static let projectToken = "bench-project-token"
    static let apiKey = "bench-api-key-0123456789"
    static let body = Data(#"{"events":[{"type":"session_start"}]}"#.utf8)
}

/// The backend, the client and the plain session, made once per benchmark process.
actor LoopbackEnvironment {
    static let shared = LoopbackEnvironment()

    struct Parts: Sendable {
        let backend: ReferenceBackend
        let client: AuthorizedHTTPClient
        let session: URLSession
        let url: URL
    }

    private var parts: Parts?

    func get() async throws -> Parts {
        if let parts { return parts }
        let backend = try await ReferenceBackend.start(.init(apiKeys: [LoopbackFixtures.apiKey], projectToken: LoopbackFixtures.projectToken))
        let configuration = try AuthorizationConfiguration(
            projectToken: LoopbackFixtures.projectToken, baseURL: backend.baseURL.absoluteString, authorization: "Token \(LoopbackFixtures.apiKey)"
        )
        let client = try AuthorizedHTTPClient(configuration: configuration, diagnostics: QuietSink())
        // The same session settings as URLSessionHTTPTransport, so only the framework differs.
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        sessionConfiguration.timeoutIntervalForRequest = 60
        sessionConfiguration.httpCookieStorage = nil
        sessionConfiguration.urlCache = nil
        let session = URLSession(configuration: sessionConfiguration)
        let url = backend.baseURL.appendingPathComponent("track/v2/projects/\(LoopbackFixtures.projectToken)/customers/events")
        let made = Parts(backend: backend, client: client, session: session, url: url)
        parts = made
        return made
    }
}

struct UnexpectedStatus: Error, CustomStringConvertible {
    let status: Int
    var description: String { "the backend answered HTTP \(status)" }
}

let benchmarks: @Sendable () -> Void = {
    let rounds = BenchmarkSettings.pick(full: 12, quick: 1)
    for concurrency in [1, 32] {
        let requests = BenchmarkSettings.pick(full: concurrency == 1 ? 500 : 2_000, quick: 32)
        let ratio = BenchmarkMetric.custom("time ratio x100 (client / URLSession)", useScalingFactor: false)
        let clientRate = BenchmarkMetric.custom("requests per second: client", polarity: .prefersLarger, useScalingFactor: false)
        let sessionRate = BenchmarkMetric.custom("requests per second: URLSession", polarity: .prefersLarger, useScalingFactor: false)
        Benchmark(
            "2 loopback: client vs URLSession, concurrency \(concurrency)",
            configuration: BenchmarkSettings.rounds(rounds, metrics: [ratio, clientRate, sessionRate])
        ) { benchmark in
            do {
                let parts = try await LoopbackEnvironment.shared.get()
                await parts.backend.clearRecords()
                let client = parts.client, session = parts.session, url = parts.url
                let viaClient: @Sendable () async throws -> Void = {
                    let response = try await client.send(.trackEvents, body: LoopbackFixtures.body)
                    guard response.statusCode == 200 else { throw UnexpectedStatus(status: response.statusCode) }
                }
                let viaSession: @Sendable () async throws -> Void = {
                    let request = handBuiltRequest(url: url, method: "POST", headerName: "Authorization", headerValue: "Token \(LoopbackFixtures.apiKey)", body: LoopbackFixtures.body)
                    let (_, response) = try await session.data(for: request)
                    let status = (response as? HTTPURLResponse)?.statusCode ?? 0
                    guard status == 200 else { throw UnexpectedStatus(status: status) }
                }
                var clientCost = SideCost(nanoseconds: 0, allocations: 0), sessionCost = clientCost
                if benchmark.currentIteration.isMultiple(of: 2) {
                    clientCost = try await measureSide { try await concurrently(requests, concurrency: concurrency, viaClient) }
                    sessionCost = try await measureSide { try await concurrently(requests, concurrency: concurrency, viaSession) }
                } else {
                    sessionCost = try await measureSide { try await concurrently(requests, concurrency: concurrency, viaSession) }
                    clientCost = try await measureSide { try await concurrently(requests, concurrency: concurrency, viaClient) }
                }
                benchmark.measurement(ratio, Int(clientCost.nanoseconds * 100 / max(sessionCost.nanoseconds, 1)))
                benchmark.measurement(clientRate, Int(Double(requests) * 1e9 / Double(max(clientCost.nanoseconds, 1))))
                benchmark.measurement(sessionRate, Int(Double(requests) * 1e9 / Double(max(sessionCost.nanoseconds, 1))))
            } catch {
                benchmark.fail(error)
            }
        }
    }
}
