import Foundation
import MallocInterposerSwift

/// Reads the malloc interposer's counters, which count while ordo-one/benchmark measures a
/// benchmark that asks for a malloc metric (the `benchmark` command plugin preloads the interposer).
/// Run outside the plugin, nothing is counted and every figure here is 0.
public enum HeapCounter {
    /// Allocation calls so far.
    public static var allocations: Int { MallocInterposerSwift.getStatistics().mallocCount }

    /// Bytes allocated minus bytes freed so far (requested sizes).
    public static var liveBytes: Int {
        let statistics = MallocInterposerSwift.getStatistics()
        return statistics.mallocBytesCount - statistics.freeBytesCount
    }

    /// Whether the interposer is counting in this process.
    public static var isCounting: Bool {
        let before = allocations
        let probe = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 16)
        probe.deallocate()
        return allocations != before
    }
}

/// The process's resident memory in bytes (VmRSS from /proc/self/status), or nil where unavailable.
public func residentBytes() -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
          let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
    else { return nil }
    return kilobytes * 1024
}
