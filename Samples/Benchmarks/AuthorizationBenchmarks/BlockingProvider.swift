// Benchmark 4: 100 requests behind a synchronous provider whose getAuthorizationToken() blocks its
// thread for 100 ms, while an unrelated canary task wakes every millisecond. The canary's lateness
// (p99) against the same canary on an idle process: the provider must not starve other async work.
import Benchmark
import BenchmarkSupport
import Foundation
import SDKAuthorization
import SDKAuthorizationEngagement
import Synchronization

enum BlockingFixtures {
    static let requests = BenchmarkSettings.pick(full: 100, quick: 10)
    static let blockMicroseconds: UInt32 = BenchmarkSettings.pick(full: 100_000, quick: 10_000)
    static let idleWindowNanoseconds: UInt64 = BenchmarkSettings.pick(full: 5_000_000_000, quick: 100_000_000)
}

/// The vendor-documented provider that blocks its thread (on a semaphore, in the vendor's words).
final class BlockingProviderClass: NSObject, AuthorizationProviderType {
    static let token = BenchmarkJWT.make()
    required override init() {}
    func getAuthorizationToken() -> String? {
        usleep(BlockingFixtures.blockMicroseconds)
        return Self.token
    }
}

final class StopFlag: Sendable {
    private let flag = Atomic(false)
    func stop() { flag.store(true, ordering: .releasing) }
    var isStopped: Bool { flag.load(ordering: .acquiring) }
}

/// An unrelated task that sleeps 1 ms at a time until stopped; returns how late each wake-up was (ns).
func startCanary(_ stop: StopFlag) -> Task<[UInt64], Never> {
    Task.detached {
        var lateness: [UInt64] = []
        lateness.reserveCapacity(20_000)
        while !stop.isStopped {
            let start = nowNanoseconds()
            try? await Task.sleep(nanoseconds: 1_000_000)
            let elapsed = nowNanoseconds() - start
            lateness.append(elapsed > 1_000_000 ? elapsed - 1_000_000 : 0)
        }
        return lateness
    }
}

func percentile(_ samples: [UInt64], _ fraction: Double) -> UInt64 {
    guard !samples.isEmpty else { return 0 }
    let sorted = samples.sorted()
    return sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
}

func blockingProviderBenchmarks() {
    let requests = BlockingFixtures.requests
    let ratio = BenchmarkMetric.custom("canary p99 ratio x100 (\(requests) blocked requests / idle)", useScalingFactor: false)
    let blockedP99 = BenchmarkMetric.custom("canary p99 lateness us: \(requests) blocked requests", useScalingFactor: false)
    let idleP99 = BenchmarkMetric.custom("canary p99 lateness us: idle", useScalingFactor: false)
    let blockedP50 = BenchmarkMetric.custom("canary p50 lateness us: \(requests) blocked requests", useScalingFactor: false)
    let idleP50 = BenchmarkMetric.custom("canary p50 lateness us: idle", useScalingFactor: false)
    let duration = BenchmarkMetric.custom("ms for the \(requests) requests (calls one at a time)", useScalingFactor: false)
    let metrics = [ratio, blockedP99, idleP99, blockedP50, idleP50, duration]
    let rounds = BenchmarkSettings.pick(full: 5, quick: 1)
    Benchmark(
        "4 blocking provider: \(requests) requests, \(BlockingFixtures.blockMicroseconds / 1000) ms each, canary p99 vs idle",
        configuration: BenchmarkSettings.rounds(rounds, metrics: metrics, maxSeconds: 300)
    ) { benchmark in
        do {
            let registry = ProviderRegistry()
            registry.register(BlockingProviderClass.self, as: "ExponeaAuthProvider")
            let configuration = try AuthorizationConfiguration(
                projectToken: PreparationFixtures.projectToken, baseURL: PreparationFixtures.baseURL,
                authorization: "Token \(PreparationFixtures.apiKey)", advancedAuthEnabled: true
            )
            let client = try AuthorizedHTTPClient(configuration: configuration, registry: registry, transport: InstantTransport(), diagnostics: QuietSink())

            func blockedRound() async throws -> (samples: [UInt64], milliseconds: Int) {
                let stop = StopFlag()
                let canary = startCanary(stop)
                let start = nowNanoseconds()
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for _ in 0..<requests {
                        group.addTask { _ = try await client.send(.appInboxFetch, body: PreparationFixtures.body) }
                    }
                    try await group.waitForAll()
                }
                let elapsed = nowNanoseconds() - start
                stop.stop()
                return (await canary.value, Int(elapsed / 1_000_000))
            }
            func idleRound() async throws -> [UInt64] {
                let stop = StopFlag()
                let canary = startCanary(stop)
                try await Task.sleep(nanoseconds: BlockingFixtures.idleWindowNanoseconds)
                stop.stop()
                return await canary.value
            }

            var blocked: (samples: [UInt64], milliseconds: Int) = ([], 0)
            var idle: [UInt64] = []
            if benchmark.currentIteration.isMultiple(of: 2) {
                blocked = try await blockedRound()
                idle = try await idleRound()
            } else {
                idle = try await idleRound()
                blocked = try await blockedRound()
            }
            let blocked99 = percentile(blocked.samples, 0.99), idle99 = percentile(idle, 0.99)
            benchmark.measurement(ratio, Int(blocked99 * 100 / max(idle99, 1)))
            benchmark.measurement(blockedP99, Int(blocked99 / 1_000))
            benchmark.measurement(idleP99, Int(idle99 / 1_000))
            benchmark.measurement(blockedP50, Int(percentile(blocked.samples, 0.5) / 1_000))
            benchmark.measurement(idleP50, Int(percentile(idle, 0.5) / 1_000))
            benchmark.measurement(duration, blocked.milliseconds)
        } catch {
            benchmark.fail(error)
        }
    }
}
