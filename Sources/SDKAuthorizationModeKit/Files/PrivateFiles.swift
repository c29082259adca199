import Foundation
import SDKAuthorization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// How the framework opens the files it keeps secrets or requests in, trusting neither the
/// directory nor what it finds there: the one place that decides, for the credential store and the
/// request journal.
///
/// - A directory is created owner-only (0700), and missing parents with it. An existing one must be
///   a directory itself (not a symbolic link), owned by this process's user, and grant group and
///   others none of the permissions its caller forbids. No parent on its real path may let another
///   user replace it: each is owned by this user or root, and is not writable by group or others
///   unless it has the sticky bit (as `/tmp` has).
/// - A file is opened without following a symbolic link and without blocking (a FIFO would wait for
///   a writer), must be a regular file owned by this user, and must grant group and others none of
///   the permissions its caller forbids.
///
/// Nothing is repaired: a directory or file someone else could have planted or swapped is not
/// believed, and changing permissions an app chose is not the framework's call. Each caller words
/// the ``Problem`` in its own error.
public enum PrivateFiles {
    /// Why a directory or file is not used.
    public enum Problem: Error, Equatable, Sendable {
        /// The directory is a symbolic link, a file or something else that is not a directory.
        case notADirectory
        /// The directory is owned by another user.
        case directoryNotOwned
        /// The directory grants group or others a forbidden permission; `mode` is its permission bits.
        case directoryOpenToOthers(mode: UInt32)
        /// A parent on the directory's real path lets another user replace what is in it.
        case unsafeParent(path: String, reason: String)
        /// The file is a symbolic link.
        case symbolicLink
        /// The file is a FIFO, device, socket or directory.
        case notARegularFile
        /// The file is owned by another user.
        case fileNotOwned
        /// The file grants group or others a forbidden permission; `mode` is its permission bits.
        case fileOpenToOthers(mode: UInt32)
        /// A system call failed: `call` names what was done, `errno` why.
        case systemCall(String, errno: Int32)
    }

    /// Verifies `directory` as the type says, creating it (and missing parents) owner-only when it
    /// does not exist and `creating` is true.
    ///
    /// - Parameters:
    ///   - directory: The directory's URL.
    ///   - forbidden: The permission bits group and others must not have: `0o077` for secrets
    ///     (owner-only), `0o022` where reading is harmless but writing is not.
    ///   - creating: Whether to create the directory when it does not exist.
    /// - Returns: `false` when the directory does not exist and `creating` is false.
    public static func verifyDirectory(_ directory: URL, forbidding forbidden: UInt32, creating: Bool) throws(Problem) -> Bool {
        let path = directory.path
        var status = stat()
        if lstat(path, &status) != 0 {
            let code = errno
            guard code == ENOENT else { throw .systemCall("inspect the directory", errno: code) }
            guard creating else { return false }
            try createParents(of: directory)
            guard mkdir(path, 0o700) == 0 || errno == EEXIST else { throw .systemCall("create the directory", errno: errno) }
            guard lstat(path, &status) == 0 else { throw .systemCall("inspect the directory", errno: errno) }
        }
        guard status.st_mode & S_IFMT == S_IFDIR else { throw .notADirectory }
        guard status.st_uid == geteuid() else { throw .directoryNotOwned }
        guard UInt32(status.st_mode) & forbidden == 0 else { throw .directoryOpenToOthers(mode: UInt32(status.st_mode) & 0o7777) }
        try checkParents(of: directory)
        return true
    }

    /// Opens the file at `path` as the type says.
    ///
    /// - Parameters:
    ///   - path: The file's path.
    ///   - flags: `open(2)` flags; `O_NOFOLLOW`, `O_NONBLOCK` and `O_CLOEXEC` are added, and the
    ///     descriptor is made blocking again once it is known to be a regular file.
    ///   - forbidden: The permission bits group and others must not have on an existing file.
    /// - Returns: The descriptor, which the caller closes, or -1 when the file does not exist and
    ///   `flags` does not create it.
    public static func openRegularFile(_ path: String, flags: Int32, forbidding forbidden: UInt32) throws(Problem) -> Int32 {
        let descriptor = open(path, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o600)
        if descriptor < 0 {
            let code = errno
            switch code {
            case ENOENT where flags & O_CREAT == 0: return -1
            case ELOOP: throw .symbolicLink
            case EISDIR, ENXIO: throw .notARegularFile
            default: throw .systemCall("open the file", errno: code)
            }
        }
        var status = stat()
        func refuse(_ problem: Problem) -> Problem {
            _ = close(descriptor)
            return problem
        }
        guard fstat(descriptor, &status) == 0 else { throw refuse(.systemCall("inspect the file", errno: errno)) }
        guard status.st_mode & S_IFMT == S_IFREG else { throw refuse(.notARegularFile) }
        guard status.st_uid == geteuid() else { throw refuse(.fileNotOwned) }
        guard UInt32(status.st_mode) & forbidden == 0 else { throw refuse(.fileOpenToOthers(mode: UInt32(status.st_mode) & 0o7777)) }
        let current = fcntl(descriptor, F_GETFL)
        guard current >= 0, fcntl(descriptor, F_SETFL, current & ~O_NONBLOCK) == 0 else { throw refuse(.systemCall("open the file", errno: errno)) }
        return descriptor
    }

    /// Creates the missing parents of `directory` owner-only.
    private static func createParents(of directory: URL) throws(Problem) {
        do {
            try FileManager.default.createDirectory(at: directory.deletingLastPathComponent(), withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw .systemCall("create the parent directories (\(type(of: error)))", errno: 0)
        }
    }

    /// Checks every parent on the real path of `directory`: owned by this user or root, and not
    /// writable by group or others unless sticky. Another user who can write a parent can rename the
    /// directory away and put one of their own in its place.
    private static func checkParents(of directory: URL) throws(Problem) {
        let parent = directory.deletingLastPathComponent().path
        guard let resolved = realpath(parent, nil) else { throw .systemCall("resolve the parent directory", errno: errno) }
        defer { free(resolved) }
        var path = String(cString: resolved)
        let user = geteuid()
        while true {
            var status = stat()
            guard lstat(path, &status) == 0 else { throw .systemCall("inspect a parent directory", errno: errno) }
            let mode = UInt32(status.st_mode)
            if status.st_uid != user, status.st_uid != 0 {
                throw .unsafeParent(path: path, reason: "is owned by another user")
            }
            if mode & 0o022 != 0, mode & UInt32(S_ISVTX) == 0 {
                throw .unsafeParent(path: path, reason: "can be written by group or others (permissions \(String(mode & 0o7777, radix: 8))) and has no sticky bit")
            }
            if path == "/" || path.isEmpty { return }
            path = (path as NSString).deletingLastPathComponent
        }
    }
}
