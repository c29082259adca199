import Foundation
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
/// - `save` writes a temporary file in the same directory and renames it over the old one, so a
///   crash leaves either the old credential or the new one, never half of one.
/// - A file is read up to 64 KB; one that cannot be read as a credential for its identity counts
///   as none (``load(identity:)`` throws, the caller exchanges anew).
/// - Identities are 1 to 100 UTF-8 bytes; the file name is their hexadecimal form.
///
/// The default directory is `Library/Application Support/SDKAuthorization/Credentials` in the
/// user's domain on Apple platforms, and `$XDG_DATA_HOME/SDKAuthorization/credentials` (or
/// `~/.local/share/SDKAuthorization/credentials`) elsewhere. Pass another with
/// ``init(directory:)``.
public final class FileCredentialStore: CredentialStore, Sendable {
    /// Where credentials are kept.
    public let directory: URL

    /// Creates a store in `directory` (created on first save).
    public init(directory: URL = FileCredentialStore.defaultDirectory) {
        self.directory = directory
    }

    /// The platform's default directory.
    public static var defaultDirectory: URL {
        applicationDataDirectory(apple: "Credentials", elsewhere: "credentials")
    }

    private struct File: Codable {
        let identity: String
        let credential: StoredCredential
    }

    public func load(identity: String) throws -> StoredCredential? {
        let url = try fileURL(identity)
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        let data = try handle.read(upToCount: 65_537) ?? Data()
        guard data.count <= 65_536, let file = try? JSONDecoder().decode(File.self, from: data), file.identity == identity else {
            throw CredentialStoreError(reason: "the stored credential for this identity is unreadable; it is ignored")
        }
        return file.credential
    }

    public func save(_ credential: StoredCredential, identity: String) throws {
        let url = try fileURL(identity)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let data = try JSONEncoder().encode(File(identity: identity, credential: credential))
        let temporary = directory.appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).tmp")
        // Created owner-only from the first byte (no window with the umask's permissions), written
        // whole and flushed before the rename makes it the identity's credential.
        let descriptor = open(temporary.path, O_CREAT | O_EXCL | O_WRONLY, 0o600)
        guard descriptor >= 0 else { throw CredentialStoreError(reason: "could not create a file in \(directory.path) (errno \(errno))") }
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
        close(descriptor)
        guard written == data.count, synced else {
            try? FileManager.default.removeItem(at: temporary)
            throw CredentialStoreError(reason: "could not write the credential file (errno \(errno))")
        }
        guard rename(temporary.path, url.path) == 0 else {
            try? FileManager.default.removeItem(at: temporary)
            throw CredentialStoreError(reason: "could not replace the stored credential (errno \(errno))")
        }
    }

    public func remove(identity: String) throws {
        let url = try fileURL(identity)
        guard FileManager.default.fileExists(atPath: url.path) else { return }
        try FileManager.default.removeItem(at: url)
    }

    private func fileURL(_ identity: String) throws(CredentialStoreError) -> URL {
        let bytes = Array(identity.utf8)
        guard (1...100).contains(bytes.count) else { throw CredentialStoreError(reason: "an identity has 1 to 100 UTF-8 bytes") }
        let hex = bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
        return directory.appendingPathComponent("credential-\(hex).json")
    }
}

/// `Library/Application Support/SDKAuthorization/<apple>` in the user's domain on Apple platforms;
/// `$XDG_DATA_HOME/SDKAuthorization/<elsewhere>` (or `~/.local/share/SDKAuthorization/<elsewhere>`)
/// elsewhere.
package func applicationDataDirectory(apple: String, elsewhere: String) -> URL {
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
