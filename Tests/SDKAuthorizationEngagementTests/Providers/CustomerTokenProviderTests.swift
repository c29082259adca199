import Dispatch
import SDKAuthorizationModeKit
import Foundation
import SDKAuthorizationTesting
import EngagementTestSupport
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationEngagement

/// Blocks its first call until the canary opens the gate, and records what it saw.
final class GatedAuthProvider: NSObject, AuthorizationProviderType {
    static let gate = DispatchSemaphore(value: 0)
    static let stats = Locked((started: 0, finished: 0, gateTimedOut: false))

    required override init() {}

    func getAuthorizationToken() -> String? {
        let first = Self.stats.withLock { stats -> Bool in
            stats.started += 1
            return stats.started == 1
        }
        if first, Self.gate.wait(timeout: .now() + 150) == .timedOut {
            Self.stats.withLock { $0.gateTimedOut = true }
        }
        Self.stats.withLock { $0.finished += 1 }
        return "gated.jwt.token"
    }
}

/// Sleeps 200 ms per call and tracks how many calls overlap.
final class SlowAuthProvider: NSObject, AuthorizationProviderType {
    static let stats = Locked((inside: 0, maximum: 0, calls: 0))
    private var unsynchronizedCache = 0

    required override init() {}

    func getAuthorizationToken() -> String? {
        Self.stats.withLock { stats in
            stats.inside += 1
            stats.calls += 1
            stats.maximum = max(stats.maximum, stats.inside)
        }
        unsynchronizedCache += 1 // safe only because calls are serialized; TSan checks it
        usleep(2_000)
        Self.stats.withLock { $0.inside -= 1 }
        return "slow.jwt.\(unsynchronizedCache)"
    }
}

@Suite("Synchronous Exponea-shaped providers", .hangLimit)
struct CustomerTokenProviderTests {
    @Test func blockedProviderDoesNotStallUnrelatedAsyncWork() async throws {
        let registry = ProviderRegistry()
        registry.register(GatedAuthProvider.self, as: "ExponeaAuthProvider")
        let transport = RecordingTransport()
        let client = try AuthorizedHTTPClient(
            configuration: engagementConfiguration(advancedAuthEnabled: true),
            registry: registry, transport: transport, diagnostics: RecordingDiagnosticsSink()
        )

        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<100 {
                group.addTask { _ = try await client.send(.appInboxFetch) }
            }
            // The canary: ordinary async work on the cooperative pool, started while the provider
            // blocks. If provider calls ran on the pool, its (two, on this machine) threads would
            // be blocked and the canary could never run, so the gate would never open.
            let canaryFinishedBeforeAnyProviderCall = await Task.detached {
                _ = await withTaskGroup(of: Int.self) { canary in
                    for index in 0..<1_000 { canary.addTask { await Task.yield(); return index } }
                    return await canary.reduce(0, +)
                }
                let finished = GatedAuthProvider.stats.withLock { $0.finished }
                GatedAuthProvider.gate.signal()
                return finished == 0
            }.value
            #expect(canaryFinishedBeforeAnyProviderCall)
            try await group.waitForAll()
        }

        let stats = GatedAuthProvider.stats.withLock { $0 }
        #expect(!stats.gateTimedOut)
        #expect(stats.finished == 100)
        #expect(transport.requests.count == 100)
        #expect(transport.requests.allSatisfy { $0.value(forHeader: "Authorization") == "Bearer gated.jwt.token" })
    }

    @Test func callsToOneProviderAreSerializedAndEachRequestAsks() async throws {
        let provider = CustomerTokenProvider(type: SlowAuthProvider.self)
        let context = AuthorizationContext(endpoint: .appInboxFetch, url: URL(string: "https://a.example/x")!)
        let tokens = try await withThrowingTaskGroup(of: Credential.self) { group in
            for _ in 0..<40 { group.addTask { try await provider.credential(for: context) } }
            return try await group.reduce(into: Set<Credential>()) { $0.insert($1) }
        }
        let stats = SlowAuthProvider.stats.withLock { $0 }
        #expect(stats.calls == 40)
        #expect(stats.maximum == 1)
        #expect(tokens.count == 40) // one instance, one call per request: slow.jwt.1 ... slow.jwt.40
    }

    @Test func cancelledRequestDoesNotCallTheProvider() async throws {
        final class CountingAuthProvider: NSObject, AuthorizationProviderType {
            static let calls = Locked(0)
            required override init() {}
            func getAuthorizationToken() -> String? {
                Self.calls.withLock { $0 += 1 }
                return "counted.jwt.token"
            }
        }
        let provider = CustomerTokenProvider(type: CountingAuthProvider.self)
        let context = AuthorizationContext(endpoint: .appInboxFetch, url: URL(string: "https://a.example/x")!)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await provider.credential(for: context)
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(CountingAuthProvider.calls.withLock { $0 } == 0)
    }
}
