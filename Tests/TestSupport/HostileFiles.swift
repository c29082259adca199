import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Files that misbehave when read, for tests of code that reads files from outside (the
/// configuration reader, the doctor, the registration generator).
public enum HostileFiles {
    /// Makes a FIFO at `path` and runs `body` while another thread waits to open it for writing and
    /// then closes it at once. A reader that waits for a writer so gets an empty file instead of
    /// hanging, so code that opens a FIFO as a file fails the test's checks instead of stalling
    /// the run; the writer is let go afterwards whatever `body` did.
    public static func withFIFO<Result>(at path: String, _ body: () throws -> Result) throws -> Result {
        guard mkfifo(path, 0o600) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        let writer = DispatchGroup()
        DispatchQueue.global().async(group: writer) {
            let descriptor = open(path, O_WRONLY | O_CLOEXEC)   // returns once a reader opens the FIFO
            if descriptor >= 0 { close(descriptor) }
        }
        defer {
            // Opening it here lets a writer still waiting go; it closes at once.
            let reader = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
            writer.wait()
            if reader >= 0 { close(reader) }
        }
        return try body()
    }

    /// Makes a sparse file of `size` bytes at `path`: it reads as that many zero bytes but takes
    /// no room on disk and no time to make.
    public static func makeSparseFile(at path: String, size: Int) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(descriptor) }
        guard ftruncate(descriptor, off_t(size)) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }

    /// How much this process has read so far, in MiB: a test reads it before and after a call, and
    /// a file the call read whole shows as growth. On Linux, the bytes `read(2)` returned to any
    /// thread (`rchar` of /proc/self/io); elsewhere the peak resident size (`getrusage`), which a
    /// file read whole into memory raises as much (but which an earlier, larger peak hides).
    public static func readSoFarMiB() -> Int {
        #if os(Linux)
        let io = (try? String(contentsOfFile: "/proc/self/io", encoding: .utf8)) ?? ""
        let line = io.split(separator: "\n").first { $0.hasPrefix("rchar:") }
        return (line.flatMap { Int($0.dropFirst("rchar:".count).trimmingCharacters(in: .whitespaces)) } ?? 0) >> 20
        #else
        var usage = rusage()
        getrusage(RUSAGE_SELF, &usage)
        return Int(usage.ru_maxrss) >> 20   // bytes on Darwin
        #endif
    }
}
