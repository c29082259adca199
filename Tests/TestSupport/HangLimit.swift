import Testing

/// A time limit for every test of a suite, so a test that hangs fails on its own instead of
/// stalling the whole run.
///
/// Swift Testing's `.timeLimit(_:)` needs macOS 13 and iOS 16, above this package's minimums, and a
/// suite type cannot be marked `@available`; this trait does the same on every platform: each test
/// case races a timer, and when the timer wins the test is cancelled and records an issue.
public struct HangLimit: SuiteTrait, TestTrait, TestScoping {
    /// Seconds each test case may take.
    public let seconds: UInt64

    /// A limit of `seconds` for each test case.
    public init(seconds: UInt64) {
        self.seconds = seconds
    }

    public var isRecursive: Bool { true }

    public func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        // The suite's own scope passes through; each test case gets its own limit.
        guard testCase != nil else { return try await function() }
        let seconds = seconds
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

extension Trait where Self == HangLimit {
    /// Three minutes for each test case: far above any test's run time, under ThreadSanitizer too.
    public static var hangLimit: Self { HangLimit(seconds: 180) }

    /// A limit of `seconds` for each test case.
    public static func hangLimit(seconds: UInt64) -> Self { HangLimit(seconds: seconds) }
}
