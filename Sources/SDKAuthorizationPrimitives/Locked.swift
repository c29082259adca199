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
/// It is `Sendable` when its value is: the value is private to it and only read or written inside
/// ``withLock(_:)``, which holds the lock for the whole access, so no two threads touch it at once.
/// The lock is not reentrant: calling ``withLock(_:)`` again from inside `body` deadlocks. Keep
/// `body` short and never await or call out to code that may come back.
///
/// A struct holding one object: the value and the lock live in a single allocation (where a class
/// with an `NSLock` made three: itself, the `NSLock`, and the mutex it allocates), which shows in
/// the allocations per request of the "1 prepare" rows of `BENCHMARKS.md`. Copies share the value
/// and the lock.
public struct Locked<Value>: CustomReflectable {
    // Inlinable, so a module that locks (the core, the kit, a mode) gets `withLock` specialized for
    // its value instead of a generic call per access ("1 prepare" and "3 waiters" rows).
    @usableFromInline let storage: LockStorage<Value>

    /// A lock guarding `value`.
    @inlinable public init(_ value: Value) {
        storage = LockStorage.make(value)
    }

    /// No children: what a lock guards may be a secret, and `dump` must not read it unlocked.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }

    /// Runs `body` with the value while holding the lock, and returns what `body` returns.
    @inlinable public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try storage.withUnsafeMutablePointers { value, lock in
            LockStorage<Value>.acquire(lock)
            defer { LockStorage<Value>.release(lock) }
            return try body(&value.pointee)
        }
    }
}

extension Locked: @unchecked Sendable where Value: Sendable {}

#if canImport(Darwin)
import Darwin
@usableFromInline typealias PlatformLock = os_unfair_lock
#elseif canImport(Glibc)
import Glibc
@usableFromInline typealias PlatformLock = pthread_mutex_t
#elseif canImport(Musl)
import Musl
@usableFromInline typealias PlatformLock = pthread_mutex_t
#else
/// Elsewhere (Windows, say) an `NSLock` kept in the buffer: two allocations, still correct.
@usableFromInline typealias PlatformLock = NSLock
#endif

/// The value (the header) and the platform's lock (the one element) of a ``Locked``, in one
/// allocation; the lock's address is stable for the object's life, as the platform's locks need.
/// Nothing unsafe leaves this file: ``Locked/withLock(_:)`` hands `body` only the value, inout.
@usableFromInline final class LockStorage<Value>: ManagedBuffer<Value, PlatformLock> {
    @inlinable static func make(_ value: Value) -> LockStorage<Value> {
        let buffer = create(minimumCapacity: 1) { _ in value }
        buffer.withUnsafeMutablePointerToElements { initialize($0) }
        // `create` is ManagedBuffer's own class method: what it returns is of the class it was called on.
        return unsafeDowncast(buffer, to: LockStorage<Value>.self)
    }

    deinit {
        withUnsafeMutablePointerToElements { lock in
            #if canImport(Glibc) || canImport(Musl)
            pthread_mutex_destroy(lock)
            #endif
            lock.deinitialize(count: 1)
        }
    }

    @usableFromInline static func initialize(_ lock: UnsafeMutablePointer<PlatformLock>) {
        #if canImport(Darwin)
        lock.initialize(to: os_unfair_lock())
        #elseif canImport(Glibc) || canImport(Musl)
        lock.initialize(to: pthread_mutex_t())
        let result = pthread_mutex_init(lock, nil)
        precondition(result == 0, "pthread_mutex_init failed: \(result)")
        #else
        lock.initialize(to: NSLock())
        #endif
    }

    @inlinable static func acquire(_ lock: UnsafeMutablePointer<PlatformLock>) {
        #if canImport(Darwin)
        os_unfair_lock_lock(lock)
        #elseif canImport(Glibc) || canImport(Musl)
        let result = pthread_mutex_lock(lock)
        precondition(result == 0, "pthread_mutex_lock failed: \(result)")
        #else
        lock.pointee.lock()
        #endif
    }

    @inlinable static func release(_ lock: UnsafeMutablePointer<PlatformLock>) {
        #if canImport(Darwin)
        os_unfair_lock_unlock(lock)
        #elseif canImport(Glibc) || canImport(Musl)
        let result = pthread_mutex_unlock(lock)
        precondition(result == 0, "pthread_mutex_unlock failed: \(result)")
        #else
        lock.pointee.unlock()
        #endif
    }
}
