import Foundation

/// A value guarded by a lock, for the few places that keep mutable state behind a `Sendable` type
/// (a provider's state, say), on every system the framework supports (the standard library's
/// `Mutex` needs iOS 18).
///
/// ```swift
/// let state = Locked([String: Int]())
/// state.withLock { $0["requests", default: 0] += 1 }
/// ```
///
/// It is `Sendable` when its value is: `value` is private and only read or written inside
/// ``withLock(_:)``, which holds the lock for the whole access, so no two threads touch it at once.
/// The lock is not reentrant: calling ``withLock(_:)`` again from inside `body` deadlocks. Keep
/// `body` short and never await or call out to code that may come back.
public final class Locked<Value>: CustomReflectable {
    private let lock = NSLock()
    private var value: Value

    /// A lock guarding `value`.
    public init(_ value: Value) {
        self.value = value
    }

    /// No children: what a lock guards may be a secret, and `dump` must not read it unlocked.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .class) }

    /// Runs `body` with the value while holding the lock, and returns what `body` returns.
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

extension Locked: @unchecked Sendable where Value: Sendable {}
