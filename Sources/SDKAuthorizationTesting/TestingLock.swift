import Foundation

/// A value guarded by a lock.
///
/// `@unchecked Sendable` is sound: `value` is private and only touched inside `withLock`, which
/// holds `lock` for the whole access.
final class TestingLock<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
