// Benchmark 5: the signature mode's durable request queue (SignatureRequestQueue). Enqueues per second
// with durability (enqueue returns once the request is on disk) against the floor of durability: the
// same number of records appended to a file with one fsync each. Recovery of 100,000 queued requests
// (opening the queue) against reading its file. The server answers 503 throughout, so the queue
// keeps every request and backs off (10 s at least) instead of sending: what is measured is queueing.
import Benchmark
import BenchmarkSupport
import Foundation
import SDKAuthorization
import SDKAuthorizationSignature
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A server that is down: every request is answered 503, so the queue keeps it.
struct UnavailableTransport: HTTPTransport {
    func send(_ request: OutgoingRequest) async throws -> ServerResponse { ServerResponse(statusCode: 503) }
}

enum QueueFixtures {
    static let signature = BenchmarkJWT.make()
    static let url = URL(string: "https://sdk.iad-01.braze.com/api/v3/data")!

    static func request(_ number: Int) -> OutgoingRequest {
        OutgoingRequest(method: "POST", url: url, headers: ["Content-Type": "application/json"],
                        body: Data(#"{"events":[{"name":"screen_view","n":\#(number)}]}"#.utf8))
    }

    static func directory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sdkauth-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    static func queue(in directory: URL, maximumEntries: Int) throws -> SignatureRequestQueue {
        let authentication = try SignatureAuthentication(diagnostics: QuietSink())
        try authentication.changeUser("user-42", signature: signature)
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(host: "*.braze.com", scheme: .signature))
        let authorizer = try RequestAuthorizer(policy: policy, providers: [.signature: authentication], diagnostics: QuietSink())
        let client = AuthorizedHTTPClient(authorizer: authorizer, transport: UnavailableTransport())
        return try SignatureRequestQueue(
            name: "bench", directory: directory, authentication: authentication, client: client,
            options: .init(maximumEntries: maximumEntries, maximumBytes: 1 << 30), diagnostics: QuietSink()
        )
    }
}

/// The floor of a durable enqueue: one record appended and fsynced, the least "on disk before
/// returning" can cost. Records the size of a queued request.
final class DurableAppendFloor {
    private let descriptor: Int32
    private let record = [UInt8](repeating: UInt8(ascii: "x"), count: 200)

    init(directory: URL) {
        descriptor = open(directory.appendingPathComponent("floor.log").path, O_WRONLY | O_CREAT | O_APPEND, 0o600)
    }

    deinit { close(descriptor) }

    func append() {
        _ = record.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        _ = fsync(descriptor)
    }
}

/// The filled queue the recovery benchmark reopens, made once per benchmark process.
final class FilledQueue: Sendable {
    static let shared = Mutex<FilledQueue?>(nil)
    let directory: URL
    let entries: Int
    init(directory: URL, entries: Int) {
        self.directory = directory
        self.entries = entries
    }
}

func durableQueueBenchmarks() {
    let rounds = BenchmarkSettings.pick(full: 15, quick: 1)
    for concurrency in [1, 32] {
        let enqueues = BenchmarkSettings.pick(full: concurrency == 1 ? 100 : 1_000, quick: concurrency == 1 ? 5 : 64)
        let ratio = BenchmarkMetric.custom("time ratio x100 (enqueue / append+fsync each)", useScalingFactor: false)
        let queueRate = BenchmarkMetric.custom("durable enqueues per second: queue", polarity: .prefersLarger, useScalingFactor: false)
        let floorRate = BenchmarkMetric.custom("durable appends per second: append+fsync", polarity: .prefersLarger, useScalingFactor: false)
        Benchmark(
            "5 queue: \(enqueues) durable enqueues, concurrency \(concurrency), vs append+fsync each",
            configuration: BenchmarkSettings.rounds(rounds, metrics: [ratio, queueRate, floorRate])
        ) { benchmark in
            do {
                let directory = try QueueFixtures.directory()
                defer { try? FileManager.default.removeItem(at: directory) }
                let queue = try QueueFixtures.queue(in: directory, maximumEntries: 1_000_000)
                let floor = DurableAppendFloor(directory: directory)
                let enqueue: @Sendable () async throws -> Void = { _ = try await queue.enqueue(QueueFixtures.request(0)) }
                var queueCost = SideCost(nanoseconds: 0, allocations: 0), floorCost = queueCost
                if benchmark.currentIteration.isMultiple(of: 2) {
                    queueCost = try await measureSide { try await concurrently(enqueues, concurrency: concurrency, enqueue) }
                    floorCost = await measureSide { for _ in 0..<enqueues { floor.append() } }
                } else {
                    floorCost = await measureSide { for _ in 0..<enqueues { floor.append() } }
                    queueCost = try await measureSide { try await concurrently(enqueues, concurrency: concurrency, enqueue) }
                }
                await queue.close()
                benchmark.measurement(ratio, Int(queueCost.nanoseconds * 100 / max(floorCost.nanoseconds, 1)))
                benchmark.measurement(queueRate, Int(Double(enqueues) * 1e9 / Double(max(queueCost.nanoseconds, 1))))
                benchmark.measurement(floorRate, Int(Double(enqueues) * 1e9 / Double(max(floorCost.nanoseconds, 1))))
            } catch {
                benchmark.fail(error)
            }
        }
    }

    let entries = BenchmarkSettings.pick(full: 100_000, quick: 1_000)
    let recoveryRatio = BenchmarkMetric.custom("time ratio x100 (open and recover / read the file)", useScalingFactor: false)
    let recoveryMillis = BenchmarkMetric.custom("ms to open and recover \(entries) requests", useScalingFactor: false)
    let readMillis = BenchmarkMetric.custom("ms to read the file", useScalingFactor: false)
    let recovered = BenchmarkMetric.custom("requests recovered (must be \(entries))", polarity: .prefersLarger, useScalingFactor: false)
    Benchmark(
        "5 queue: recovery of \(entries) requests vs reading the file",
        configuration: BenchmarkSettings.rounds(BenchmarkSettings.pick(full: 7, quick: 1), metrics: [recoveryRatio, recoveryMillis, readMillis, recovered], maxSeconds: 300)
    ) { benchmark in
        do {
            guard let filled = FilledQueue.shared.withLock({ $0 }) else { throw BenchmarkFailure("the queue was not filled") }
            let file = filled.directory.appendingPathComponent("bench.queue")
            var queue: SignatureRequestQueue?
            let openCost = try await measureSide { queue = try QueueFixtures.queue(in: filled.directory, maximumEntries: 1_000_000) }
            let count = queue?.recovery.recoveredCount ?? 0
            await queue?.close()
            let readCost = try await measureSide { blackHole(try Data(contentsOf: file)) }
            benchmark.measurement(recoveryRatio, Int(openCost.nanoseconds * 100 / max(readCost.nanoseconds, 1)))
            benchmark.measurement(recoveryMillis, Int(openCost.nanoseconds / 1_000_000))
            benchmark.measurement(readMillis, max(1, Int(readCost.nanoseconds / 1_000_000)))
            benchmark.measurement(recovered, count)
            guard count == filled.entries else { throw BenchmarkFailure("recovered \(count) of \(filled.entries) requests") }
        } catch {
            benchmark.fail(error)
        }
    } setup: {
        // Filled by many concurrent enqueuers, which share writes: a few seconds for 100,000.
        let directory = try QueueFixtures.directory()
        let queue = try QueueFixtures.queue(in: directory, maximumEntries: 1_000_000)
        try await concurrently(entries, concurrency: 512) { _ = try await queue.enqueue(QueueFixtures.request(1)) }
        await queue.close()
        FilledQueue.shared.withLock { $0 = FilledQueue(directory: directory, entries: entries) }
    } teardown: {
        if let filled = FilledQueue.shared.withLock({ $0 }) { try? FileManager.default.removeItem(at: filled.directory) }
    }
}
