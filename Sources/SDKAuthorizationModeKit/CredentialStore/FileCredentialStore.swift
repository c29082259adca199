import Foundation
import SDKAuthorization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The default ``CredentialStore``: one small JSON file per identity in a directory only the
/// process owner can read.
///
/// - The directory is created with permissions 0700, each file with 0600.
/// - The store trusts neither its directory nor what it finds there. A directory that is not a
///   directory (a symbolic link, say), is not owned by the process's user, or is writable or
///   readable by group or others, or sits under a parent another user could replace it through (a
///   parent not owned by this user or root, or writable by group or others without the sticky bit),
///   is refused: every call throws a ``CredentialStoreError`` that says which, and the store does
///   not repair it (a file another user could plant or swap there is not
///   a credential, and changing permissions the app set is not the store's call).
/// - A credential file is opened without following a symbolic link and without blocking; one that
///   is not a regular file, not owned by the process's user, or not owner-only (any permission
///   for group or others) is refused with a ``CredentialStoreError`` and not read.
/// - `save` writes a temporary file in the same directory and renames it over the old one, so a
///   crash leaves either the old credential or the new one, never half of one. The writer holds a
///   lock on the temporary file while it writes; the first call of a store instance removes every
///   temporary file no live writer holds, so a save a crash or `kill -9` interrupted leaves no copy
///   of the token behind past the next launch.
/// - A file is read up to 64 KB; one that cannot be read as a credential for its identity counts
///   as none (``load(identity:)`` throws, the caller exchanges anew).
/// - Identities are 1 to 100 UTF-8 bytes, compared as exact bytes (``CredentialStore``): the file
///   name is their hexadecimal form, and a file that names another identity, even a canonically
///   equivalent one, is not the credential of this one.
/// - Each provider kind has its own file per identity (`credential-<kind>-<hex>.json`, and
///   `credential-<kind>.<instance digest>-<hex>.json` for a provider instance's own slot,
///   ``CredentialKind/scoped(to:)``), which records the ``CredentialOwner`` (the store's
///   ``namespace``, the kind and its instance); a file another namespace, kind or instance wrote,
///   or one without an owner, is refused with
///   ``CredentialStoreError/Code/foreignCredential``. The identity calls without a kind use
///   `credential-<hex>.json`, as before owners were recorded; no provider reads it.
///
/// The default directory is per namespace: `Library/Application Support/SDKAuthorization/Credentials/<namespace>`
/// in the user's domain on Apple platforms, and `$XDG_DATA_HOME/SDKAuthorization/credentials/<namespace>` (or
/// `~/.local/share/SDKAuthorization/credentials/<namespace>`) elsewhere
/// (``defaultDirectory(for:)``). Pass another with ``init(namespace:directory:)``; give each
/// namespace its own.
public final class FileCredentialStore: CredentialStore, Sendable {
    /// Where credentials are kept.
    public let directory: URL
    /// The SDK whose credentials this store keeps.
    public let namespace: CredentialNamespace

    /// Creates the store of `namespace` in `directory` (created on first save), by default the
    /// namespace's own directory, ``defaultDirectory(for:)``.
    public init(namespace: CredentialNamespace, directory: URL? = nil) {
        self.namespace = namespace
        self.directory = directory ?? Self.defaultDirectory(for: namespace)
    }

    /// The platform's default directory for `namespace`: a subdirectory named after it.
    public static func defaultDirectory(for namespace: CredentialNamespace) -> URL {
        applicationDataDirectory(apple: "Credentials", elsewhere: "credentials")
            .appendingPathComponent(namespace.name, isDirectory: true)
    }

    private struct File: Codable {
        let identity: String
        let credential: StoredCredential
    }

    /// The largest credential file read.
    private static let maximumFileSize = 65_536

    /// The prefix of a save's temporary file.
    static let temporaryPrefix = ".tmp-"

    /// Whether this instance has removed the temporary files interrupted saves left.
    private let cleanedLeftovers = Locked(false)

    public func load(identity: String) throws -> StoredCredential? {
        try load(identity: identity, from: fileURL(identity, kind: nil))
    }

    public func load(identity: String, kind: CredentialKind) throws -> StoredCredential? {
        guard let credential = try load(identity: identity, from: fileURL(identity, kind: kind)) else { return nil }
        try CredentialOwner(namespace: namespace, kind: kind).check(credential)
        return credential
    }

    /// Saves `credential` in the slot of `identity` and `kind`, owned by ``namespace`` and `kind`;
    /// a slot holding a credential another namespace, kind or instance wrote (a directory two
    /// stores share) is left as it is, and this throws ``CredentialStoreError/Code/foreignCredential``.
    public func save(_ credential: StoredCredential, identity: String, kind: CredentialKind) throws {
        let owner = CredentialOwner(namespace: namespace, kind: kind)
        let url = try fileURL(identity, kind: kind)
        try owner.checkMayReplace(try? load(identity: identity, from: url))
        var owned = credential
        owned.owner = owner
        try save(owned, identity: identity, to: url)
    }

    /// Removes the slot of `identity` and `kind`, unless it holds a credential another namespace,
    /// kind or instance wrote (a directory two stores share), which is left as it is.
    public func remove(identity: String, kind: CredentialKind) throws {
        let url = try fileURL(identity, kind: kind)
        guard CredentialOwner(namespace: namespace, kind: kind).mayRemove(try? load(identity: identity, from: url)) else { return }
        try remove(at: url)
    }

    private func load(identity: String, from url: URL) throws -> StoredCredential? {
        guard try verifyPrivateDirectory(directory, creating: false) else { return nil }
        removeLeftoversOnce()
        let descriptor: Int32
        do {
            descriptor = try PrivateFiles.openRegularFile(url.path, flags: O_RDONLY, forbidding: 0o077)
        } catch {
            throw Self.fileError(error)
        }
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        let data = try Self.readBytes(descriptor, upTo: Self.maximumFileSize + 1)
        guard data.count <= Self.maximumFileSize, let file = try? JSONDecoder().decode(File.self, from: data),
              Credential.Identity.same(file.identity, identity) else {
            throw CredentialStoreError.unreadableCredential
        }
        return file.credential
    }

    public func save(_ credential: StoredCredential, identity: String) throws {
        try save(credential, identity: identity, to: fileURL(identity, kind: nil))
    }

    private func save(_ credential: StoredCredential, identity: String, to url: URL) throws {
        _ = try verifyPrivateDirectory(directory, creating: true)
        removeLeftoversOnce()
        let data = try JSONEncoder().encode(File(identity: identity, credential: credential))
        guard data.count <= Self.maximumFileSize else { throw CredentialStoreError.credentialTooLarge(size: data.count, limit: Self.maximumFileSize) }
        // Short whatever the identity: a 100-byte identity's file name is at most 241 bytes, and this
        // name must fit the same 255-byte limit.
        let temporary = directory.appendingPathComponent("\(Self.temporaryPrefix)\(UUID().uuidString)")
        // Created owner-only from the first byte (no window with the umask's permissions), written
        // whole and flushed before the rename makes it the identity's credential.
        let descriptor = open(temporary.path, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw CredentialStoreError.fileSystemFailed("could not create a file in \(directory.path) (errno \(errno))") }
        // Locked while it is written: a store that finds it unlocked knows its writer is gone (the
        // system drops the lock when a process dies) and removes it.
        _ = flock(descriptor, LOCK_EX)
        let written = data.withUnsafeBytes { buffer -> Int in
            guard let base = buffer.baseAddress else { return 0 }
            var offset = 0
            while offset < buffer.count {
                let count = write(descriptor, base + offset, buffer.count - offset)
                if count <= 0 { return offset }
                offset += count
            }
            return offset
        }
        let synced = fsync(descriptor) == 0
        let writeError = errno
        close(descriptor)
        guard written == data.count, synced else {
            unlink(temporary.path)
            throw CredentialStoreError.fileSystemFailed("could not write the credential file (errno \(writeError))")
        }
        // rename replaces whatever is at the credential's name (a link or a FIFO included) and
        // follows nothing.
        guard rename(temporary.path, url.path) == 0 else {
            let error = errno
            unlink(temporary.path)
            throw CredentialStoreError.fileSystemFailed("could not replace the stored credential (errno \(error))")
        }
    }

    public func remove(identity: String) throws {
        try remove(at: fileURL(identity, kind: nil))
    }

    /// Removes, once per instance, the temporary files of saves a crash interrupted: every
    /// `.tmp-*` regular file in the directory whose lock no live writer holds. Quiet; a file it
    /// cannot remove is tried again by the next instance.
    private func removeLeftoversOnce() {
        guard cleanedLeftovers.withLock({ cleaned in defer { cleaned = true }; return !cleaned }) else { return }
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return }
        for name in names where name.hasPrefix(Self.temporaryPrefix) {
            let path = directory.appendingPathComponent(name).path
            let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
            guard descriptor >= 0 else { continue }
            defer { close(descriptor) }
            var status = stat()
            guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_uid == geteuid(),
                  flock(descriptor, LOCK_EX | LOCK_NB) == 0 else { continue }
            // Still the file it locked (not one renamed in its place since).
            var current = stat()
            guard lstat(path, &current) == 0, current.st_ino == status.st_ino, current.st_dev == status.st_dev else { continue }
            unlink(path)
        }
    }

    private func remove(at url: URL) throws {
        // unlink removes a symbolic link itself, never what it points to.
        guard unlink(url.path) == 0 || errno == ENOENT else {
            throw CredentialStoreError.fileSystemFailed("could not remove the stored credential (errno \(errno))")
        }
    }

    /// The store's words for why the credential file is not read.
    private static func fileError(_ problem: PrivateFiles.Problem) -> CredentialStoreError {
        switch problem {
        case .symbolicLink: .unsafeFile("the credential file is a symbolic link; it is not followed")
        case .notARegularFile: .unsafeFile("the credential file is not a regular file; it is not read")
        case .fileNotOwned: .unsafeFile("the credential file is not owned by this process's user; it is not believed")
        case .fileOpenToOthers(let mode): .unsafeFile("the credential file is not owner-only (permissions \(String(mode & 0o777, radix: 8))); it is not believed")
        case .systemCall(let call, let code): .fileSystemFailed("could not \(call.replacingOccurrences(of: "the file", with: "the credential file")) (errno \(code))")
        case .notADirectory, .directoryNotOwned, .directoryOpenToOthers, .unsafeParent: .unsafeFile("the credential file is refused")
        }
    }

    /// The identity's file for `kind` (`nil`: the slot without a kind). The identity's hexadecimal
    /// form has no `-`, so the last `-` ends the kind's slot name and no two slots share a name. At
    /// most 250 bytes: 11 + 33 (a 24-byte kind, `.`, 8 digits) + 1 + 200 + 5.
    private func fileURL(_ identity: String, kind: CredentialKind?) throws(CredentialStoreError) -> URL {
        guard Credential.Identity.isValid(identity) else { throw .invalidIdentity }
        return directory.appendingPathComponent("credential-\(kind.map { "\($0.slotName)-" } ?? "")\(Credential.Identity.hexadecimal(identity)).json")
    }

    /// Up to `limit` bytes of an open file.
    private static func readBytes(_ descriptor: Int32, upTo limit: Int) throws(CredentialStoreError) -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while data.count < limit {
            let count = buffer.withUnsafeMutableBytes { raw -> Int in
                guard let base = raw.baseAddress else { return 0 }
                return read(descriptor, base, min(raw.count, limit - data.count))
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw CredentialStoreError.fileSystemFailed("could not read the credential file (errno \(errno))")
            }
            if count == 0 { break }
            data.append(contentsOf: buffer[0..<count])
        }
        return data
    }
}

/// Makes sure `directory` is a private directory of this process's user (``PrivateFiles``),
/// creating it (0700) when `creating` and it does not exist.
///
/// - Returns: `false` when it does not exist and `creating` is false.
/// - Throws: ``CredentialStoreError`` when it is not a directory (a symbolic link or a file), is
///   owned by another user, grants any permission to group or others, or has a parent another user
///   could replace it through. It is not repaired: files someone else could have planted or swapped
///   in it are not to be trusted.
func verifyPrivateDirectory(_ directory: URL, creating: Bool) throws(CredentialStoreError) -> Bool {
    let path = directory.path
    do {
        return try PrivateFiles.verifyDirectory(directory, forbidding: 0o077, creating: creating)
    } catch {
        switch error {
        case .notADirectory:
            throw .unsafeDirectory("\(path) is not a directory (a symbolic link or a file); it is not used")
        case .directoryNotOwned:
            throw .unsafeDirectory("the directory \(path) is not owned by this process's user; it is not used")
        case .directoryOpenToOthers(let mode):
            throw .unsafeDirectory("the directory \(path) is open to group or others (permissions \(String(mode, radix: 8))); it is not used until it is owner-only (0700)")
        case .unsafeParent(let parent, let reason):
            throw .unsafeDirectory("the directory \(path) is not used: its parent \(parent) \(reason), so another user could replace it")
        case .systemCall(let call, let code):
            throw .fileSystemFailed("could not \(call) \(path) (errno \(code))")
        case .symbolicLink, .notARegularFile, .fileNotOwned, .fileOpenToOthers:
            throw .unsafeDirectory("\(path) is not a directory; it is not used")
        }
    }
}

/// `Library/Application Support/SDKAuthorization/<apple>` in the user's domain on Apple platforms;
/// `$XDG_DATA_HOME/SDKAuthorization/<elsewhere>` (or `~/.local/share/SDKAuthorization/<elsewhere>`)
/// elsewhere.
func applicationDataDirectory(apple: String, elsewhere: String) -> URL {
    #if canImport(Darwin)
    let base = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
        ?? FileManager.default.temporaryDirectory
    return base.appendingPathComponent("SDKAuthorization/\(apple)", isDirectory: true)
    #else
    if let data = ProcessInfo.processInfo.environment["XDG_DATA_HOME"], data.hasPrefix("/") {
        return URL(fileURLWithPath: data).appendingPathComponent("SDKAuthorization/\(elsewhere)", isDirectory: true)
    }
    return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/share/SDKAuthorization/\(elsewhere)", isDirectory: true)
    #endif
}
