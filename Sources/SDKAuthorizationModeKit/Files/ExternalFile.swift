import Foundation
import SDKAuthorization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A file the framework did not write (a configuration file, a provider manifest, a source file),
/// read the one safe way: the path's own file only (no symbolic link followed), only a regular file
/// (never a FIFO or device that could block or never end), and never more than a limit.
///
/// The configuration reader, the authorization doctor and the build-time registration read their
/// files through it; a mode of your own that reads a file of its own can do the same:
///
/// ```swift
/// let data = try ExternalFile.read(atPath: path, limit: 64 * 1024)
/// ```
public enum ExternalFile {
    /// Why a file from outside (a configuration file, a provider manifest, a source file) was not
    /// read.
    public enum Problem: Error, Equatable, Sendable {
        /// Nothing is at the path.
        case noSuchFile
        /// The path is a symbolic link; it is not followed.
        case symbolicLink
        /// The path is a directory.
        case directory
        /// The path is a FIFO, device or socket: reading it could block forever or never end.
        case notARegularFile
        /// The file is larger than `limit` bytes; it was not read.
        case tooLarge(limit: Int)
        /// A system call failed: `call` names what was done, `errno` why.
        case systemCall(String, errno: Int32)

        /// The problem in words, for an error message: "no such file", "it is a directory", ...
        public var reason: String {
            switch self {
            case .noSuchFile: "no such file"
            case .symbolicLink: "it is a symbolic link, which is not followed"
            case .directory: "it is a directory"
            case .notARegularFile: "it is not a regular file (a FIFO, device or socket)"
            case .tooLarge(let limit): "it is larger than \(limit) bytes"
            case .systemCall(let call, let code): "\(call) failed: \(String(cString: strerror(code)))"
            }
        }
    }

    /// Reads the regular file at `path`, at most `limit` bytes of it: the one way the framework
    /// and its tools read a file they did not write.
    ///
    /// The file is opened without following a symbolic link (`O_NOFOLLOW`) and without blocking
    /// (`O_NONBLOCK`: a FIFO would wait for a writer); what was opened must be a regular file, and
    /// its size is checked on the open descriptor (`fstat`), so a file is judged by what is read,
    /// not by what the path showed a moment before. The file is then read no further than
    /// `limit + 1` bytes, so one that grew meanwhile is refused too.
    public static func read(atPath path: String, limit: Int) throws(Problem) -> Data {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        if descriptor < 0 {
            let code = errno
            switch code {
            case ENOENT: throw .noSuchFile
            case ELOOP: throw .symbolicLink
            case EISDIR: throw .directory
            case ENXIO: throw .notARegularFile
            default: throw .systemCall("open", errno: code)
            }
        }
        defer { _ = close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw .systemCall("fstat", errno: errno) }
        switch status.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: throw .directory
        default: throw .notARegularFile
        }
        guard status.st_size <= limit else { throw .tooLarge(limit: limit) }
        let flags = fcntl(descriptor, F_GETFL)
        guard flags >= 0, fcntl(descriptor, F_SETFL, flags & ~O_NONBLOCK) == 0 else { throw .systemCall("fcntl", errno: errno) }

        var data = Data()
        var chunk = [UInt8](repeating: 0, count: min(limit + 1, 65_536))
        while data.count <= limit {
            let wanted = min(chunk.count, limit + 1 - data.count)
            let count = chunk.withUnsafeMutableBytes { systemRead(descriptor, $0.baseAddress, wanted) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .systemCall("read", errno: errno)
            }
            if count == 0 { break }
            data.append(contentsOf: chunk[..<count])
        }
        guard data.count <= limit else { throw .tooLarge(limit: limit) }
        return data
    }
}

/// `read(2)`, under a name `ExternalFile.read(atPath:limit:)` does not shadow.
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}
