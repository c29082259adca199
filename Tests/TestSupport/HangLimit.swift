import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A time limit for every test of a suite, so a test that hangs fails on its own instead of
/// stalling the whole run.
///
/// Swift Testing's `.timeLimit(_:)` needs macOS 13 and iOS 16, above this package's minimums, and a
/// suite type cannot be marked `@available`; this trait does the same on every platform: each test
/// case races a timer, and when the timer wins the test is cancelled and records an issue.
///
/// Cancelling is not enough when the test's body ignores cancellation (a continuation nobody
/// resumes, a callback run inline that waits forever, a cooperative pool whose threads are all
/// blocked): the test would then never end, and neither would the process. So each test case is
/// also watched from a thread of its own (``HangWatchdog``, not the cooperative pool): when the
/// case has not ended `grace` seconds after its limit, the watchdog prints which test hung to
/// standard error and ends the process with exit status 1, and `swift test` fails at once.
public struct HangLimit: SuiteTrait, TestTrait, TestScoping {
    /// Seconds each test case may take.
    public let seconds: UInt64
    /// Seconds a test case that was cancelled at its limit has to end before the process is ended.
    public let graceSeconds: UInt64
    /// What happens to a test case still running `graceSeconds` after its limit: by default the
    /// watchdog's message on standard error and exit status 1 (``HangWatchdog/endProcess(_:)``).
    let stuck: @Sendable (_ message: String) -> Void
    /// The thread that watches the test cases.
    let watchdog: HangWatchdog

    /// A limit of `seconds` for each test case; the process ends when a case has not ended
    /// `graceSeconds` after it.
    public init(seconds: UInt64, graceSeconds: UInt64 = HangLimit.defaultGraceSeconds) {
        self.init(seconds: seconds, graceSeconds: graceSeconds, watchdog: .shared, whenStuck: HangWatchdog.endProcess)
    }

    /// A limit whose stuck test case is reported to `whenStuck` instead of ending the process, watched
    /// by `watchdog`: for TestTimeLimitTests, which checks the watchdog without ending its own run.
    public init(seconds: UInt64, graceSeconds: UInt64, watchdog: HangWatchdog, whenStuck: @escaping @Sendable (_ message: String) -> Void) {
        self.seconds = seconds
        self.graceSeconds = graceSeconds
        self.watchdog = watchdog
        self.stuck = whenStuck
    }

    public var isRecursive: Bool { true }

    /// 180 s, or `SDKAUTH_TEST_HANG_LIMIT` seconds when that is set to a positive whole number.
    public static var defaultSeconds: UInt64 { shortenedLimit ?? 180 }

    /// How long a cancelled test case has to end before the process is ended: 120 s, or 10 s in a
    /// run that expects hangs (`SDKAUTH_TEST_HANG_LIMIT` set). Generous on purpose: a case that does
    /// end when cancelled may still wait that long for a thread under ThreadSanitizer on 2 cores,
    /// while other tests hold the cooperative pool's threads with long synchronous work (seen: more
    /// than 10 s), and ending the process then would fail a run in which nothing hung.
    public static var defaultGraceSeconds: UInt64 { shortenedLimit == nil ? 120 : 10 }

    private static var shortenedLimit: UInt64? {
        ProcessInfo.processInfo.environment["SDKAUTH_TEST_HANG_LIMIT"].flatMap { UInt64($0) }.flatMap { $0 > 0 ? $0 : nil }
    }

    public func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        // The suite's own scope passes through; each test case gets its own limit.
        guard testCase != nil else { return try await function() }
        let seconds = seconds
        let name = "\(test.id)"
        // Armed on the watchdog's thread before the body starts, so a pool too busy or blocked to run
        // the timer below still has the process ended.
        let watchdog = watchdog
        let watch = watchdog.arm(
            after: TimeInterval(seconds + graceSeconds),
            message: "HangLimit: the test \(name) did not end within its time limit of \(seconds) s, nor \(graceSeconds) s after it was cancelled; "
                + "its body ignores cancellation. Ending the test process (exit status 1).",
            stuck: stuck
        )
        defer { watchdog.disarm(watch) }
        try await withoutActuallyEscaping(function) { body in
            try await withThrowingTaskGroup(of: Bool.self) { group in
                group.addTask { try await body(); return true }
                group.addTask {
                    try await Task.sleep(nanoseconds: seconds * 1_000_000_000)
                    return false
                }
                defer { group.cancelAll() }
                if try await group.next() == false {
                    Issue.record("The test did not end within its time limit of \(seconds) s (HangLimit); it was cancelled")
                }
            }
        }
    }
}

/// One thread, outside the cooperative pool, that ends the test process when a test case armed on
/// it has not ended by its deadline (``HangLimit``).
public final class HangWatchdog: @unchecked Sendable {
    /// The process's watchdog; its thread starts at the first test case armed.
    public static let shared = HangWatchdog()

    /// Prints `message` to standard error and ends the process with exit status 1, without running
    /// what a normal exit runs (a hung test may hold the locks those need).
    public static func endProcess(_ message: String) {
        fflush(nil)
        let bytes = Array("\n\(message)\n".utf8)
        _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        _exit(1)
    }

    private struct Watch {
        let deadline: Date
        let message: String
        let stuck: @Sendable (String) -> Void
    }

    private let condition = NSCondition()
    private var watches: [UInt64: Watch] = [:]
    private var nextID: UInt64 = 0
    private var started = false

    /// A watchdog of its own (tests of the watchdog); ``shared`` watches every test.
    public init() {}

    /// How many test cases it watches now.
    public var armedCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return watches.count
    }

    /// Starts watching: `stuck(message)` runs on the watchdog's thread `seconds` from now unless
    /// ``disarm(_:)`` is called first.
    public func arm(after seconds: TimeInterval, message: String, stuck: @escaping @Sendable (String) -> Void) -> UInt64 {
        condition.lock()
        defer { condition.unlock() }
        nextID += 1
        watches[nextID] = Watch(deadline: Date().addingTimeInterval(seconds), message: message, stuck: stuck)
        if !started {
            started = true
            let thread = Thread { [self] in run() }
            thread.name = "HangLimit watchdog"
            thread.start()
        }
        condition.signal()
        return nextID
    }

    /// Stops watching the test case `id` (it ended).
    public func disarm(_ id: UInt64) {
        condition.lock()
        watches[id] = nil
        condition.unlock()
    }

    private func run() {
        condition.lock()
        while true {
            let now = Date()
            let due = watches.filter { $0.value.deadline <= now }
            for id in due.keys { watches[id] = nil }
            if !due.isEmpty {
                condition.unlock()
                for watch in due.values { watch.stuck(watch.message) }
                condition.lock()
                continue
            }
            let next = watches.values.map(\.deadline).min() ?? now.addingTimeInterval(3_600)
            _ = condition.wait(until: next)
        }
    }
}

extension Trait where Self == HangLimit {
    /// Three minutes for each test case: far above any test's run time, under ThreadSanitizer too.
    /// A case that ignores its cancellation ends the process 2 minutes later (``HangLimit/defaultGraceSeconds``).
    /// `SDKAUTH_TEST_HANG_LIMIT` (seconds) shortens both for a run that expects hangs (`Scripts/plant-bugs`).
    public static var hangLimit: Self { HangLimit(seconds: HangLimit.defaultSeconds) }

    /// A limit of `seconds` for each test case.
    public static func hangLimit(seconds: UInt64) -> Self { HangLimit(seconds: seconds) }
}
