// Measures the refresh-callback mode under load: N requests wait for an ID token, then the app
// sets it. Reports how long all N take to resume, how many refresh callbacks ran, and how much
// resident memory the waiting requests add.
//
//   swift run -c release --package-path Samples refresh-waiters-benchmark [N ...]
//
// Real clock, real tasks; nothing is mocked. Times are the median of 5 runs; the memory column
// comes from the first run, so give one N per process for a clean memory figure.
import Foundation
import SDKAuthorization
import Synchronization

/// The process's resident memory in bytes (VmRSS from /proc/self/status), or nil where unavailable.
func heapBytesInUse() -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
          let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
    else { return nil }
    return kilobytes * 1024
}

/// Silences the store's diagnostics so printing does not distort the timing.
struct QuietSink: DiagnosticsSink {
    func record(_ diagnostic: Diagnostic) {}
}

final class CallbackCounter: Sendable {
    private let value = Mutex(0)
    func increment() { value.withLock { $0 += 1 } }
    var count: Int { value.withLock { $0 } }
}

struct Measurement {
    let waiters: Int
    let callbacks: Int
    let resumeSeconds: Double
    let setSeconds: Double
    let heapBytesPerWaiter: Double?
}

func measure(waiters: Int) async throws -> Measurement {
    let store = try IDTokenStore(authorizedDomains: ["api.rover.io"], diagnostics: QuietSink())
    let callbacks = CallbackCounter()
    store.registerRefreshCallback { callbacks.increment() }
    let context = AuthorizationContext(endpoint: "ticketing", url: URL(string: "https://api.rover.io/ticketing")!)

    let heapBefore = heapBytesInUse()
    // Unstructured tasks, not a task group: the runtime removes a finished child from a group's
    // child list by walking it, which is quadratic in the group's size and would dominate here.
    let tasks = (0..<waiters).map { _ in Task { try await store.credential(for: context) } }
    while store.waitingRequestCount < waiters {
        try await Task.sleep(nanoseconds: 1_000_000)
    }
    let heapWaiting = heapBytesInUse()
    let start = DispatchTime.now().uptimeNanoseconds
    try store.setIDToken("header.payload.signature")
    let setSeconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    var resumed = 0
    for task in tasks where try await task.value == .bearer("header.payload.signature") {
        resumed += 1
    }
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    precondition(resumed == waiters, "only \(resumed) of \(waiters) resumed with the token")
    let perWaiter = zip(heapBefore, heapWaiting).map { Double($1 - $0) / Double(waiters) }
    return Measurement(waiters: waiters, callbacks: callbacks.count, resumeSeconds: seconds, setSeconds: setSeconds, heapBytesPerWaiter: perWaiter)
}

func zip(_ a: Int?, _ b: Int?) -> (Int, Int)? {
    guard let a, let b else { return nil }
    return (a, b)
}

let sizes = CommandLine.arguments.dropFirst().compactMap(Int.init)
let runs = 5
print("refresh-callback mode: N waiters, one setIDToken; median of \(runs) runs")
print("waiters  callbacks  setIDToken (ms)  resume-all (ms)  resident memory while waiting (bytes/waiter)")
for size in sizes.isEmpty ? [1_000, 10_000, 100_000] : sizes {
    var results: [Measurement] = []
    for _ in 0..<runs { results.append(try await measure(waiters: size)) }
    let times = results.map(\.resumeSeconds).sorted()
    // Memory from the first run only: later runs reuse memory the allocator kept from earlier ones.
    let heaps = results.prefix(1).compactMap(\.heapBytesPerWaiter)
    let median = times[times.count / 2] * 1000
    let sets = results.map(\.setSeconds).sorted()
    let setMedian = sets[sets.count / 2] * 1000
    let heap = heaps.first.map { String(format: "%.0f", $0) } ?? "n/a"
    let callbacks = Set(results.map(\.callbacks)).sorted().map(String.init).joined(separator: ",")
    print(String(format: "%7d  %9@  %15.2f  %15.2f  %@", size, callbacks as NSString, setMedian, median, heap as NSString))
}
