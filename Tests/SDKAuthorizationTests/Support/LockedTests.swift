import Foundation
import Testing
import TestSupport
@testable import SDKAuthorization
import SDKAuthorizationModeKit

private final class Secret: Sendable {
    let text: String
    init(_ text: String) { self.text = text }
}

/// `Locked`: the value and the platform's lock in one object (issue 39's allocation rows).
@Suite("A value behind a lock", .hangLimit)
struct LockedTests {
    @Test func incrementsFromManyThreadsAtOnceLoseNoUpdate() {
        let counter = Locked(0)
        let threads = 8, increments = 20_000
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            for _ in 0..<increments {
                // Read, then write in a second statement: without the lock, two threads interleave here.
                counter.withLock { value in
                    let read = value
                    value = read &+ 1
                }
            }
        }
        #expect(counter.withLock { $0 } == threads * increments)
    }

    @Test func aCopySharesTheValueAndTheLock() {
        let original = Locked([String]())
        let copy = original
        copy.withLock { $0.append("from the copy") }
        #expect(original.withLock { $0 } == ["from the copy"])
    }

    @Test func anErrorThrownInsideReleasesTheLock() {
        struct Refused: Error {}
        let state = Locked(1)
        #expect(throws: Refused.self) { try state.withLock { _ in throw Refused() } }
        // A lock left held would deadlock here.
        #expect(state.withLock { $0 } == 1)
    }

    @Test func theValueIsReleasedWithTheLastCopy() {
        weak var released: Secret?
        do {
            let state = Locked(Secret("token-abc"))
            released = state.withLock { $0 }
            #expect(released != nil)
        }
        #expect(released == nil)
    }

    @Test func dumpAndDescriptionNeverShowTheValue() {
        let state = Locked(Secret("token-abc"))
        var dumped = ""
        dump(state, to: &dumped)
        #expect(!dumped.contains("token-abc"))
        #expect(!String(describing: state).contains("token-abc"))
        #expect(!String(reflecting: state).contains("token-abc"))
    }
}
