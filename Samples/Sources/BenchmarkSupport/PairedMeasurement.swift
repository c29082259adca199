import Benchmark
import Dispatch
import Foundation

/// How long the benchmarks run. `SDKAUTH_BENCHMARK_QUICK=1` (set by `Scripts/benchmarks --quick`)
/// shrinks every benchmark to a few small rounds: enough to prove it builds and runs, not to measure.
public enum BenchmarkSettings {
    public static let quick = ProcessInfo.processInfo.environment["SDKAUTH_BENCHMARK_QUICK"] != nil

    /// `full` normally, `quick` under `--quick`.
    public static func pick<T>(full: T, quick: T) -> T { Self.quick ? quick : full }

    /// A configuration whose only real outputs are the custom metrics given: each iteration of the
    /// benchmark is one round that measures the subject and its floor side by side.
    /// `mallocCountTotal` is there so the malloc interposer counts while the rounds run; the
    /// per-side allocation metrics read its counters.
    public static func rounds(_ rounds: Int, metrics: [BenchmarkMetric], maxSeconds: Int = 120) -> Benchmark.Configuration {
        Benchmark.Configuration(
            metrics: [.mallocCountTotal] + metrics,
            warmupIterations: quick ? 0 : 1,
            scalingFactor: .one,
            maxDuration: .seconds(quick ? 20 : maxSeconds),
            maxIterations: quick ? 1 : rounds
        )
    }
}

extension Benchmark {
    /// Fails the benchmark with `error`. Under `--quick` (standalone executables, where a failed
    /// benchmark would otherwise end the run quietly with status 0) the process exits with status 1.
    public func fail(_ error: any Error) {
        let description = "\(name): \(error)"
        if BenchmarkSettings.quick {
            FileHandle.standardError.write(Data("benchmark failed: \(description)\n".utf8))
            exit(1)
        }
        self.error(description)
    }
}

/// A monotonic timestamp in nanoseconds.
@inline(__always)
public func nowNanoseconds() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

/// The metrics of one subject measured against its floor. Ratios are reported ×100 (147 = 1.47x)
/// because ordo-one/benchmark keeps integer samples; every other value is per request.
public struct PairedMetrics: Sendable {
    /// Subject time ÷ floor time, ×100.
    public let timeRatio: BenchmarkMetric
    /// Subject nanoseconds per operation.
    public let subjectNanoseconds: BenchmarkMetric
    /// Floor nanoseconds per operation.
    public let floorNanoseconds: BenchmarkMetric
    /// Subject allocations per operation ×100 (0 when the malloc interposer is not loaded).
    public let subjectAllocations: BenchmarkMetric
    /// Floor allocations per operation ×100.
    public let floorAllocations: BenchmarkMetric
    /// Subject and floor context switches of the whole process per operation ×100, when counted:
    /// how often a thread went to sleep and was woken (a hand-off to another thread and back costs one
    /// or two).
    public let contextSwitches: (subject: BenchmarkMetric, floor: BenchmarkMetric)?

    public init(subject: String, floor: String, countsContextSwitches: Bool = false) {
        timeRatio = .custom("time ratio x100 (\(subject) / \(floor))", polarity: .prefersSmaller, useScalingFactor: false)
        subjectNanoseconds = .custom("ns per op: \(subject)", polarity: .prefersSmaller, useScalingFactor: false)
        floorNanoseconds = .custom("ns per op: \(floor)", polarity: .prefersSmaller, useScalingFactor: false)
        subjectAllocations = .custom("allocs per op x100: \(subject)", polarity: .prefersSmaller, useScalingFactor: false)
        floorAllocations = .custom("allocs per op x100: \(floor)", polarity: .prefersSmaller, useScalingFactor: false)
        contextSwitches = countsContextSwitches ? (
            .custom("context switches per op x100: \(subject)", polarity: .prefersSmaller, useScalingFactor: false),
            .custom("context switches per op x100: \(floor)", polarity: .prefersSmaller, useScalingFactor: false)
        ) : nil
    }

    public var all: [BenchmarkMetric] {
        [timeRatio, subjectNanoseconds, floorNanoseconds, subjectAllocations, floorAllocations] + (contextSwitches.map { [$0.subject, $0.floor] } ?? [])
    }
}

/// What one side of a round cost.
public struct SideCost: Sendable {
    public var nanoseconds: UInt64
    public var allocations: Int
    /// Voluntary and involuntary context switches of every thread of the process.
    public var contextSwitches: Int

    public init(nanoseconds: UInt64, allocations: Int, contextSwitches: Int = 0) {
        self.nanoseconds = nanoseconds
        self.allocations = allocations
        self.contextSwitches = contextSwitches
    }
}

/// Context switches of every thread of the process so far (getrusage), voluntary (a thread that
/// waits and sleeps) and involuntary (one the scheduler preempted).
public func processContextSwitches() -> Int {
    var usage = rusage()
    #if canImport(Glibc)
    let who = __rusage_who_t(RUSAGE_SELF.rawValue)
    #else
    let who = RUSAGE_SELF
    #endif
    guard getrusage(who, &usage) == 0 else { return 0 }
    return Int(usage.ru_nvcsw) + Int(usage.ru_nivcsw)
}

/// Measures `body` (which runs `operations` operations) for time and allocations.
public func measureSide(_ body: () async throws -> Void) async rethrows -> SideCost {
    let allocationsBefore = HeapCounter.allocations
    let switchesBefore = processContextSwitches()
    let start = nowNanoseconds()
    try await body()
    let elapsed = nowNanoseconds() - start
    return SideCost(nanoseconds: elapsed, allocations: HeapCounter.allocations - allocationsBefore,
                    contextSwitches: processContextSwitches() - switchesBefore)
}

/// One round: `operations` of the subject and `operations` of the floor, in an order that alternates
/// from round to round so neither side always runs on a warmer cache; records every metric of `metrics`.
public func pairedRound(
    _ benchmark: Benchmark,
    metrics: PairedMetrics,
    operations: Int,
    subject: () async throws -> Void,
    floor: () async throws -> Void
) async rethrows {
    let subjectFirst = benchmark.currentIteration.isMultiple(of: 2)
    var subjectCost = SideCost(nanoseconds: 0, allocations: 0)
    var floorCost = SideCost(nanoseconds: 0, allocations: 0)
    if subjectFirst {
        subjectCost = try await measureSide(subject)
        floorCost = try await measureSide(floor)
    } else {
        floorCost = try await measureSide(floor)
        subjectCost = try await measureSide(subject)
    }
    record(benchmark, metrics: metrics, operations: operations, subject: subjectCost, floor: floorCost)
}

/// Records one round's figures.
public func record(_ benchmark: Benchmark, metrics: PairedMetrics, operations: Int, subject: SideCost, floor: SideCost) {
    let operations = max(operations, 1)
    benchmark.measurement(metrics.timeRatio, Int((Double(subject.nanoseconds) * 100 / Double(max(floor.nanoseconds, 1))).rounded()))
    benchmark.measurement(metrics.subjectNanoseconds, Int(subject.nanoseconds) / operations)
    benchmark.measurement(metrics.floorNanoseconds, Int(floor.nanoseconds) / operations)
    benchmark.measurement(metrics.subjectAllocations, subject.allocations * 100 / operations)
    benchmark.measurement(metrics.floorAllocations, floor.allocations * 100 / operations)
    if let switches = metrics.contextSwitches {
        benchmark.measurement(switches.subject, subject.contextSwitches * 100 / operations)
        benchmark.measurement(switches.floor, floor.contextSwitches * 100 / operations)
    }
}

/// Runs `body` `count` times split over `concurrency` child tasks.
public func concurrently(_ count: Int, concurrency: Int, _ body: @escaping @Sendable () async throws -> Void) async throws {
    if concurrency <= 1 {
        for _ in 0..<count { try await body() }
        return
    }
    try await withThrowingTaskGroup(of: Void.self) { group in
        for worker in 0..<concurrency {
            let share = count / concurrency + (worker < count % concurrency ? 1 : 0)
            group.addTask {
                for _ in 0..<share { try await body() }
            }
        }
        try await group.waitForAll()
    }
}
