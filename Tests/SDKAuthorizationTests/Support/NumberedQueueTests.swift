import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationModeKit

@Suite("Numbered queue (waits and deadlines)", .hangLimit)
struct NumberedQueueTests {
    @Test func everyEntryIsFoundByItsNumberAcrossCompactionsAndTheFrontStopsAtTheFirstEntryNotDone() {
        var queue = NumberedQueue<(number: UInt64, done: Bool)>(firstNumber: 7)
        for expected in UInt64(7)..<UInt64(7 + 5_000) {
            #expect(queue.append((expected, false)) == expected)
        }
        // Done out of order: the front moves only past a run of done entries.
        for number in UInt64(7)..<UInt64(7 + 3_000) where number != 2_500 {
            queue[queue.index(of: number)!].done = true
        }
        queue.dropDone { $0.done }
        #expect(queue[queue.liveIndices.first!].number == 2_500)
        queue[queue.index(of: 2_500)!].done = true
        queue.dropDone { $0.done }
        #expect(queue[queue.liveIndices.first!].number == 7 + 3_000)
        // The array was compacted; numbers still lead to their entries, and done ones are gone.
        #expect(queue.entries.count < 5_000)
        #expect(queue.index(of: 7) == nil)
        for number in UInt64(7 + 3_000)..<UInt64(7 + 5_000) {
            #expect(queue[queue.index(of: number)!].number == number)
        }
        #expect(queue.index(of: 7 + 5_000) == nil)
    }

    @Test func aQueueWhoseEntriesAreAllDoneIsEmptyAndNumbersGoOnFromWhereTheyWere() {
        var queue = NumberedQueue<Int>()
        for value in 0..<10 { _ = queue.append(value) }
        queue.dropDone { _ in true }
        #expect(queue.entries.isEmpty && queue.liveIndices.isEmpty)
        #expect(queue.append(42) == 10)
        #expect(queue.index(of: 10) == 0)
        #expect(queue.index(of: 9) == nil)
    }
}
