import Foundation

/// A value guarded by a lock, for the few places that keep mutable state behind a `Sendable` type.
///
/// `@unchecked Sendable` is sound here: `value` is private and only read or written inside
/// `withLock`, which holds `lock` for the whole access, so no two threads touch it at once.
package final class Locked<Value>: @unchecked Sendable, CustomReflectable {
    private let lock = NSLock()
    private var value: Value

    package init(_ value: Value) {
        self.value = value
    }

    /// No children: what a lock guards may be a secret, and `dump` must not read it unlocked.
    package var customMirror: Mirror { Mirror(self, children: [], displayStyle: .class) }

    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
