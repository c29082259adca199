/// Entries numbered in the order they are added, each kept until it and every entry before it are
/// done: an array with a moving front. An entry is found by its number in constant time, and the
/// done entries at the front are dropped in amortized constant time.
///
/// The waits of a ``SingleFlight`` are kept in one, in the order they began, so every waiter is
/// handed its value in arrival order in one pass.
struct NumberedQueue<Entry> {
    private(set) var entries: [Entry] = []
    /// The number of `entries[0]`.
    private(set) var firstNumber: UInt64
    /// Every entry before `head` is done.
    private(set) var head = 0

    init(firstNumber: UInt64 = 0) {
        self.firstNumber = firstNumber
    }

    /// The indices of the entries not known to be done, oldest first.
    var liveIndices: Range<Int> { head..<entries.count }

    /// The index of the entry numbered `number`, while it is in the queue.
    func index(of number: UInt64) -> Int? {
        guard number >= firstNumber, number - firstNumber < UInt64(entries.count) else { return nil }
        return Int(number - firstNumber)
    }

    /// Adds `entry` at the back; returns its number.
    mutating func append(_ entry: Entry) -> UInt64 {
        entries.append(entry)
        return firstNumber + UInt64(entries.count - 1)
    }

    subscript(index: Int) -> Entry {
        get { entries[index] }
        _modify { yield &entries[index] }
    }

    /// Drops the entries at the front for which `isDone` holds.
    mutating func dropDone(_ isDone: (Entry) -> Bool) {
        while head < entries.count, isDone(entries[head]) { head += 1 }
        if head == entries.count {
            firstNumber += UInt64(head)
            entries.removeAll(keepingCapacity: entries.count <= 4_096)
            head = 0
        } else if head >= 1_024, head * 2 >= entries.count {
            firstNumber += UInt64(head)
            entries.removeFirst(head)
            head = 0
        }
    }
}

extension NumberedQueue: Sendable where Entry: Sendable {}
