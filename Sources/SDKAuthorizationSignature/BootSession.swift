import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The identifier of the system's current boot: the same in every process until the system
/// restarts, and then a new one. The request queue uses it to know whether the monotonic clock of
/// an age mark is the one running now.
enum BootSession {
    /// The current boot session's identifier, or empty when the platform gives none (the queue then
    /// reads the time between launches from the wall clock).
    static func current() -> [UInt8] {
        #if os(Linux) || os(Android)
        // The kernel's random boot ID: a UUID's text and a newline, new at every boot.
        let descriptor = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { return [] }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: JournalCodec.maximumBootSessionLength)
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return [] }
        return Array(buffer[..<count].filter { $0 != UInt8(ascii: "\n") })
        #elseif canImport(Darwin)
        // The kernel's boot session UUID, new at every boot.
        var size = 0
        guard sysctlbyname("kern.bootsessionuuid", nil, &size, nil, 0) == 0, size > 0, size <= JournalCodec.maximumBootSessionLength + 1 else { return [] }
        var buffer = [UInt8](repeating: 0, count: size)
        guard sysctlbyname("kern.bootsessionuuid", &buffer, &size, nil, 0) == 0 else { return [] }
        return Array(buffer.prefix(size).prefix { $0 != 0 })
        #else
        return []
        #endif
    }
}
