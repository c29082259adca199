// Benchmark 3: N requests wait on a stale ID token, the app sets it once. The IDTokenStore against
// gates that do nothing but park continuations (a lock-based one, the same inside a cancellation
// handler, since a request's wait must end when its task is cancelled, and an actor), and then the
// same N through client.send. Each round measures every side once, in rotating order.
import Benchmark
import BenchmarkSupport
import Foundation
import SDKAuthorization
import SDKAuthorizationIDToken

/// What parking and releasing N waiters cost one side.
struct WaiterCost {
    /// From the call that sets the token to the last waiter resumed.
    var releaseNanoseconds: UInt64
    /// Heap bytes (allocated minus freed) per waiter while all N wait; resident memory when the
    /// malloc interposer is not loaded.
    var bytesPerWaiter: Int
}

/// Starts `count` waiters with `start`, waits until `waiting()` reports them all parked, then times
/// `release()` up to the moment every waiter has finished.
func measureWaiters<Result: Sendable>(
    _ count: Int,
    start: @escaping @Sendable () async throws -> Result,
    waiting: () async -> Int,
    release: () async throws -> Void,
    check: (Result) -> Bool
) async throws -> WaiterCost {
    let counting = HeapCounter.isCounting
    let before = counting ? HeapCounter.liveBytes : residentBytes() ?? 0
    // Unstructured tasks, not a task group: a group removes each finished child from its list by
    // walking it, which is quadratic at these sizes and would dominate the figure.
    var tasks: [Task<Result, any Error>] = []
    tasks.reserveCapacity(count)
    for _ in 0..<count { tasks.append(Task { try await start() }) }
    while await waiting() < count {
        try await Task.sleep(nanoseconds: 1_000_000)
    }
    let parked = counting ? HeapCounter.liveBytes : residentBytes() ?? 0
    let begin = nowNanoseconds()
    try await release()
    var resumed = 0
    for task in tasks where check(try await task.value) { resumed += 1 }
    let elapsed = nowNanoseconds() - begin
    guard resumed == count else { throw BenchmarkFailure("only \(resumed) of \(count) waiters resumed with the token") }
    return WaiterCost(releaseNanoseconds: elapsed, bytesPerWaiter: (parked - before) / count)
}

struct BenchmarkFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

enum WaiterFixtures {
    static let token = BenchmarkJWT.make()
    static let roverURL = URL(string: "https://api.rover.io/ticketing")!

    static func store(callbacks: CallCounter) throws -> IDTokenStore {
        let store = try IDTokenStore(authorizedDomains: ["api.rover.io"], diagnostics: QuietSink())
        store.registerRefreshCallback { callbacks.increment() }
        return store
    }

    static func lockGate(_ count: Int) async throws -> WaiterCost {
        let gate = LockGate()
        return try await measureWaiters(count, start: { await gate.wait() }, waiting: { gate.waitingCount }, release: { gate.set(token) }, check: { $0 == token })
    }

    static func cancellableLockGate(_ count: Int) async throws -> WaiterCost {
        let gate = LockGate()
        return try await measureWaiters(count, start: { await gate.waitCancellable() }, waiting: { gate.waitingCount }, release: { gate.set(token) }, check: { $0 == token })
    }

    static func actorGate(_ count: Int) async throws -> WaiterCost {
        let gate = ActorGate()
        return try await measureWaiters(count, start: { await gate.wait() }, waiting: { await gate.waitingCount }, release: { await gate.set(token) }, check: { $0 == token })
    }

    static func store(_ count: Int, callbacks: CallCounter) async throws -> WaiterCost {
        let store = try store(callbacks: callbacks)
        let context = AuthorizationContext(endpoint: "ticketing", url: roverURL)
        return try await measureWaiters(
            count, start: { try await store.credential(for: context) }, waiting: { store.waitingRequestCount },
            release: { try store.setIDToken(token) }, check: { $0 == .bearer(token) }
        )
    }

    /// The same wait through the seam alone, `RequestAuthorizer.authorize`, with no client around it.
    static func seam(_ count: Int, callbacks: CallCounter) async throws -> WaiterCost {
        let store = try store(callbacks: callbacks)
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(host: "api.rover.io", scheme: .bearer))
        let authorizer = try RequestAuthorizer(policy: policy, providers: [.bearer: store], diagnostics: QuietSink())
        let request = OutgoingRequest(method: "GET", url: roverURL)
        return try await measureWaiters(
            count, start: { try await authorizer.authorize(request).carriesCredential }, waiting: { store.waitingRequestCount },
            release: { try store.setIDToken(token) }, check: { $0 }
        )
    }

    static func client(_ count: Int, callbacks: CallCounter) async throws -> WaiterCost {
        let store = try store(callbacks: callbacks)
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(host: "api.rover.io", scheme: .bearer))
        let authorizer = try RequestAuthorizer(policy: policy, providers: [.bearer: store], diagnostics: QuietSink())
        let client = AuthorizedHTTPClient(authorizer: authorizer, transport: InstantTransport())
        let request = OutgoingRequest(method: "GET", url: roverURL)
        return try await measureWaiters(
            count, start: { try await client.send(request).statusCode }, waiting: { store.waitingRequestCount },
            release: { try store.setIDToken(token) }, check: { $0 == 200 }
        )
    }

    /// The same wait through `client.send` with a transport that says nothing of deadlines (the default path).
    static func clientSilentTransport(_ count: Int, callbacks: CallCounter) async throws -> WaiterCost {
        let store = try store(callbacks: callbacks)
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(host: "api.rover.io", scheme: .bearer))
        let authorizer = try RequestAuthorizer(policy: policy, providers: [.bearer: store], diagnostics: QuietSink())
        let client = AuthorizedHTTPClient(authorizer: authorizer, transport: SilentTransport())
        let request = OutgoingRequest(method: "GET", url: roverURL)
        return try await measureWaiters(
            count, start: { try await client.send(request).statusCode }, waiting: { store.waitingRequestCount },
            release: { try store.setIDToken(token) }, check: { $0 == 200 }
        )
    }

    /// The same wait through the quick start's overload, `client.send(endpoint, body:)`.
    static func clientByEndpoint(_ count: Int, callbacks: CallCounter) async throws -> WaiterCost {
        let store = try store(callbacks: callbacks)
        var policy = AuthorizationPolicy()
        try policy.add(Endpoint("ticketing", method: "POST", path: roverURL.absoluteString), scheme: .bearer)
        let authorizer = try RequestAuthorizer(policy: policy, providers: [.bearer: store], diagnostics: QuietSink())
        let client = AuthorizedHTTPClient(authorizer: authorizer, transport: InstantTransport())
        let body = Data(#"{"page":1}"#.utf8)
        return try await measureWaiters(
            count, start: { try await client.send("ticketing", body: body).statusCode }, waiting: { store.waitingRequestCount },
            release: { try store.setIDToken(token) }, check: { $0 == 200 }
        )
    }
}

func refreshWaiterBenchmarks() {
    let sizes = BenchmarkSettings.pick(full: [1_000, 10_000, 100_000], quick: [1_000])
    for size in sizes {
        let rounds = BenchmarkSettings.pick(full: size >= 100_000 ? 7 : 15, quick: 1)
        let lockRatio = BenchmarkMetric.custom("time ratio x100 (IDTokenStore / lock gate)", useScalingFactor: false)
        let actorRatio = BenchmarkMetric.custom("time ratio x100 (IDTokenStore / actor gate)", useScalingFactor: false)
        let cancellableRatio = BenchmarkMetric.custom("time ratio x100 (IDTokenStore / lock gate in a cancellation handler)", useScalingFactor: false)
        let cancellableMicros = BenchmarkMetric.custom("us set-to-all-resumed: lock gate in a cancellation handler", useScalingFactor: false)
        let callbacks = BenchmarkMetric.custom("refresh callbacks per round (must be 1)", useScalingFactor: false)
        let storeMicros = BenchmarkMetric.custom("us set-to-all-resumed: IDTokenStore", useScalingFactor: false)
        let lockMicros = BenchmarkMetric.custom("us set-to-all-resumed: lock gate", useScalingFactor: false)
        let actorMicros = BenchmarkMetric.custom("us set-to-all-resumed: actor gate", useScalingFactor: false)
        let storeBytes = BenchmarkMetric.custom("bytes per waiter: IDTokenStore", useScalingFactor: false)
        let lockBytes = BenchmarkMetric.custom("bytes per waiter: lock gate", useScalingFactor: false)
        let actorBytes = BenchmarkMetric.custom("bytes per waiter: actor gate", useScalingFactor: false)
        let metrics = [lockRatio, actorRatio, cancellableRatio, callbacks, storeMicros, lockMicros, actorMicros, cancellableMicros, storeBytes, lockBytes, actorBytes]
        Benchmark("3 waiters: \(size) on IDTokenStore vs gates", configuration: BenchmarkSettings.rounds(rounds, metrics: metrics)) { benchmark in
            do {
                let counter = CallCounter()
                var lock = WaiterCost(releaseNanoseconds: 0, bytesPerWaiter: 0), actor = lock, cancellable = lock, store = lock
                // Rotate the order, so no side always runs first on a fresh heap.
                for side in (0..<4).map({ ($0 + benchmark.currentIteration) % 4 }) {
                    switch side {
                    case 0: lock = try await WaiterFixtures.lockGate(size)
                    case 1: actor = try await WaiterFixtures.actorGate(size)
                    case 2: cancellable = try await WaiterFixtures.cancellableLockGate(size)
                    default: store = try await WaiterFixtures.store(size, callbacks: counter)
                    }
                }
                benchmark.measurement(lockRatio, Int(store.releaseNanoseconds * 100 / max(lock.releaseNanoseconds, 1)))
                benchmark.measurement(actorRatio, Int(store.releaseNanoseconds * 100 / max(actor.releaseNanoseconds, 1)))
                benchmark.measurement(cancellableRatio, Int(store.releaseNanoseconds * 100 / max(cancellable.releaseNanoseconds, 1)))
                benchmark.measurement(cancellableMicros, Int(cancellable.releaseNanoseconds / 1_000))
                benchmark.measurement(callbacks, counter.count)
                benchmark.measurement(storeMicros, Int(store.releaseNanoseconds / 1_000))
                benchmark.measurement(lockMicros, Int(lock.releaseNanoseconds / 1_000))
                benchmark.measurement(actorMicros, Int(actor.releaseNanoseconds / 1_000))
                benchmark.measurement(storeBytes, store.bytesPerWaiter)
                benchmark.measurement(lockBytes, lock.bytesPerWaiter)
                benchmark.measurement(actorBytes, actor.bytesPerWaiter)
            } catch {
                benchmark.fail(error)
            }
        }

        let clientRatio = BenchmarkMetric.custom("time ratio x100 (client.send / lock gate)", useScalingFactor: false)
        let clientCallbacks = BenchmarkMetric.custom("refresh callbacks per round (must be 1)", useScalingFactor: false)
        let clientMicros = BenchmarkMetric.custom("us set-to-all-resumed: client.send", useScalingFactor: false)
        let gateMicros = BenchmarkMetric.custom("us set-to-all-resumed: lock gate", useScalingFactor: false)
        let clientBytes = BenchmarkMetric.custom("bytes per waiter: client.send", useScalingFactor: false)
        let gateBytes = BenchmarkMetric.custom("bytes per waiter: lock gate", useScalingFactor: false)
        let overGate = BenchmarkMetric.custom("bytes per waiter over the gate: client.send", useScalingFactor: false)
        let seamBytes = BenchmarkMetric.custom("bytes per waiter: authorizer.authorize (the seam, no client)", useScalingFactor: false)
        let endpointBytes = BenchmarkMetric.custom("bytes per waiter: client.send(endpoint, body:)", useScalingFactor: false)
        let silentBytes = BenchmarkMetric.custom("bytes per waiter: client.send, transport that declares nothing", useScalingFactor: false)
        let clientMetrics = [clientRatio, clientCallbacks, clientMicros, gateMicros, clientBytes, gateBytes, overGate, seamBytes, endpointBytes, silentBytes]
        Benchmark("3 waiters: \(size) through client.send vs lock gate", configuration: BenchmarkSettings.rounds(rounds, metrics: clientMetrics)) { benchmark in
            do {
                let counter = CallCounter()
                let gate: WaiterCost, client: WaiterCost
                if benchmark.currentIteration.isMultiple(of: 2) {
                    gate = try await WaiterFixtures.lockGate(size)
                    client = try await WaiterFixtures.client(size, callbacks: counter)
                } else {
                    client = try await WaiterFixtures.client(size, callbacks: counter)
                    gate = try await WaiterFixtures.lockGate(size)
                }
                benchmark.measurement(clientRatio, Int(client.releaseNanoseconds * 100 / max(gate.releaseNanoseconds, 1)))
                benchmark.measurement(clientCallbacks, counter.count)
                benchmark.measurement(clientMicros, Int(client.releaseNanoseconds / 1_000))
                benchmark.measurement(gateMicros, Int(gate.releaseNanoseconds / 1_000))
                benchmark.measurement(clientBytes, client.bytesPerWaiter)
                benchmark.measurement(gateBytes, gate.bytesPerWaiter)
                benchmark.measurement(overGate, max(0, client.bytesPerWaiter - gate.bytesPerWaiter))
                benchmark.measurement(seamBytes, try await WaiterFixtures.seam(size, callbacks: CallCounter()).bytesPerWaiter)
                benchmark.measurement(endpointBytes, try await WaiterFixtures.clientByEndpoint(size, callbacks: CallCounter()).bytesPerWaiter)
                benchmark.measurement(silentBytes, try await WaiterFixtures.clientSilentTransport(size, callbacks: CallCounter()).bytesPerWaiter)
            } catch {
                benchmark.fail(error)
            }
        }
    }
}
