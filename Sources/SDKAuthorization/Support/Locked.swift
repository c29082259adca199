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
/// It is `Sendable` when its value is: the value is only read or written inside ``withLock(_:)``,
/// which holds the lock for the whole access, so no two threads touch it at once. Copies share one
/// value and one lock. The lock is not reentrant: calling ``withLock(_:)`` again from inside `body`
/// deadlocks. Keep `body` short and never await or call out to code that may come back.
public struct Locked<Value>: CustomReflectable {
    private let storage: LockedStorage<Value>

    /// A lock guarding `value`.
    public init(_ value: Value) {
        storage = LockedStorage.make(value)
    }

    /// No children: what a lock guards may be a secret, and `dump` must not read it unlocked.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .class) }

    /// Runs `body` with the value while holding the lock, and returns what `body` returns.
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try storage.withLock(body)
    }
}

extension Locked: @unchecked Sendable where Value: Sendable {}

/// The value and its mutex in one allocation (an `NSLock` beside a class took three: the class, the
/// lock object and its mutex). Benchmark row: every request creates locks (its deadline wait, its
/// credential's record), `Scripts/measure-provider-hop`'s "declares nothing" and
/// "declares endsByDeadline".
final class LockedStorage<Value>: ManagedBuffer<Value, pthread_mutex_t> {
    static func make(_ value: Value) -> LockedStorage {
        let storage = unsafeDowncast(create(minimumCapacity: 1) { _ in value }, to: LockedStorage.self)
        storage.withUnsafeMutablePointerToElements { mutex in
            mutex.initialize(to: pthread_mutex_t())
            let result = pthread_mutex_init(mutex, nil)
            precondition(result == 0, "pthread_mutex_init failed: \(result)")
        }
        return storage
    }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try withUnsafeMutablePointers { value, mutex in
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return try body(&value.pointee)
        }
    }

    deinit {
        withUnsafeMutablePointerToElements { mutex in
            pthread_mutex_destroy(mutex)
            mutex.deinitialize(count: 1)
        }
    }
}
