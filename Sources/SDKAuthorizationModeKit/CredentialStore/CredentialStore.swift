import Foundation
import SDKAuthorization

/// A credential kept for one identity between launches: the token, when known when it expires,
/// and who wrote it.
///
/// Its description and mirror never show the token.
public struct StoredCredential: Sendable, Equatable, Codable, CustomStringConvertible, CustomReflectable {
    /// The token.
    public var token: String
    /// When it expires (wall-clock time), if known.
    public var expiresAt: Date?
    /// The namespace and provider kind that wrote it, recorded by
    /// ``CredentialStore/save(_:identity:kind:)``; `nil` for a credential saved without one (by the
    /// app, or before owners were recorded), which no provider is served.
    public var owner: CredentialOwner?

    /// Creates a stored credential; `owner` is set by the store when a provider saves it.
    public init(token: String, expiresAt: Date?, owner: CredentialOwner? = nil) {
        self.token = token
        self.expiresAt = expiresAt
        self.owner = owner
    }

    public var description: String {
        "StoredCredential(\(Redaction.redact(token)), expires: \(expiresAt.map { "\($0)" } ?? "unknown")\(owner.map { ", owner: \($0)" } ?? ""))"
    }

    public var customMirror: Mirror { Mirror(self, children: ["description": description], displayStyle: .struct) }
}

/// Keeps credentials between launches, one per identity: the user a credential belongs to, as the
/// app names it (their ID), so one user's credential never serves another.
///
/// A store belongs to one SDK, its ``namespace``, and keeps each provider kind's credential apart:
/// the providers call ``load(identity:kind:)``, ``save(_:identity:kind:)`` and
/// ``remove(identity:kind:)``, the store records the ``CredentialOwner`` (its namespace and the
/// kind, with the kind's instance: ``CredentialKind/scoped(to:)``) with the credential and serves it
/// only to the same namespace, kind and instance. A credential written by another namespace, kind or
/// instance, or without an owner (saved with ``save(_:identity:)``, or before
/// owners were recorded), is refused with ``CredentialStoreError/Code/foreignCredential``; the
/// providers log that and fetch a new token, which replaces it. So two SDKs in one app, two modes
/// of one SDK, or two providers of one mode (two regions, staging beside production), never send
/// each other's tokens, even for the same user ID.
///
/// The token-exchange mode keeps its exchanged auth token in one; the refresh-callback mode
/// (`IDTokenStore`) can keep its ID token in one, opt-in. The framework ships two:
/// `KeychainCredentialStore` on Apple platforms and ``FileCredentialStore`` everywhere;
/// ``PlatformCredentialStore`` names the one that is the platform's default (the Keychain on Apple
/// platforms, the file store on Linux):
///
/// ```swift
/// let namespace = try CredentialNamespace("com.example.chat-sdk")   // your SDK's bundle identifier
/// let exchange = try TokenExchangeProvider(exchangeURL: exchangeURL, signer: signer,
///                                          identity: userID, store: PlatformCredentialStore(namespace: namespace))
/// ```
///
/// # Identities are exact bytes
/// Two identities are the same user only when their UTF-8 bytes are the same, as a server compares
/// user IDs: `"jos\u{E9}"` (NFC) and `"jose\u{301}"` (NFD) are two users, with two slots, although
/// Swift's `==` calls them equal. The framework's stores key and compare identities by
/// `identity.utf8`, never by `String` equality or hashing, and normalize nothing.
///
/// # Implementation requirements
/// Calls may come from any thread, concurrently. `save` replaces the identity's credential whole
/// (never half-written); `remove` of an identity with nothing stored succeeds. Keep the token out
/// of logs and errors. Key and compare identities by their UTF-8 bytes (above): a `[String: …]`
/// dictionary would give one user's credential to another whose ID is canonically equivalent.
/// Keep a ``StoredCredential`` whole, its ``StoredCredential/owner`` included: a store that drops
/// it serves no provider. The kind-scoped calls have default implementations over the three
/// identity calls, which keep one slot per identity (the kinds then replace each other's
/// credential, and refuse it); implement them to give each kind (and each
/// ``CredentialKind/instance``) its own slot, as the framework's stores do, and check the owner:
/// on load (throw ``CredentialStoreError/foreignCredential(writtenBy:expected:)``), on save (leave a
/// slot another owner wrote as it is, and throw ``CredentialStoreError/Code/foreignCredential``)
/// and on remove (leave it as it is).
public protocol CredentialStore: Sendable {
    /// The SDK whose credentials this store keeps; recorded in every credential a provider saves.
    var namespace: CredentialNamespace { get }
    /// The credential stored for `identity` in its slot without a kind, or `nil`. Providers do not
    /// use it.
    func load(identity: String) throws -> StoredCredential?
    /// Stores `credential` for `identity` in its slot without a kind, replacing any before.
    func save(_ credential: StoredCredential, identity: String) throws
    /// Forgets the credential of `identity` in its slot without a kind.
    func remove(identity: String) throws
    /// The credential `kind` stored for `identity`, or `nil`.
    ///
    /// - Throws: ``CredentialStoreError/foreignCredential(writtenBy:expected:)`` when the slot
    ///   holds a credential another namespace or kind wrote, or one without an owner.
    func load(identity: String, kind: CredentialKind) throws -> StoredCredential?
    /// Stores `credential` for `identity` and `kind`, owned by ``namespace`` and `kind`, replacing
    /// any before.
    func save(_ credential: StoredCredential, identity: String, kind: CredentialKind) throws
    /// Forgets the credential `kind` stored for `identity`.
    func remove(identity: String, kind: CredentialKind) throws
}

/// Why a ``FileCredentialStore`` call failed. No text of it (``message``, `description`,
/// `debugDescription`, `localizedDescription`, `dump`) ever holds a token: the store never puts
/// what it read or was given to keep in an error.
///
/// It is a struct with a ``Code`` rather than an enum, as `RequestError` is: later versions add
/// codes without breaking any caller's exhaustive `switch`.
///
/// ```swift
/// do {
///     try store.save(credential, identity: userID)
/// } catch let error as CredentialStoreError where error.code == .unsafeDirectory {
///     logger.error("\(error)")   // fix the directory's permissions; the store does not
/// }
/// ```
///
/// Two errors are equal when their ``code`` and ``message`` are equal: its texts, `dump` and
/// equality are those of every error of the framework (`ErrorShape.Coded`).
public struct CredentialStoreError: ErrorShape.Coded {
    /// What went wrong, as a stable name a caller can match on.
    public struct Code: ErrorShape.Code {
        /// The code's name.
        public let rawValue: String
        /// Creates a code.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The identity is not 1 to 100 UTF-8 bytes.
        public static let invalidIdentity = Code(rawValue: "invalidIdentity")
        /// The store's directory is not a directory (a symbolic link or a file), is owned by
        /// another user, or is open to group or others; it is not used, and not repaired.
        public static let unsafeDirectory = Code(rawValue: "unsafeDirectory")
        /// The credential file is a symbolic link, not a regular file, owned by another user or
        /// not owner-only; it is not read.
        public static let unsafeFile = Code(rawValue: "unsafeFile")
        /// The credential file is not a credential for the identity (too large, not its JSON, or
        /// another identity's); it is ignored.
        public static let unreadableCredential = Code(rawValue: "unreadableCredential")
        /// The credential is larger than the store keeps (what it could not read back); it is not
        /// saved, and what was stored before is kept.
        public static let credentialTooLarge = Code(rawValue: "credentialTooLarge")
        /// The file system refused to open, inspect, create, read, write, replace or remove a file
        /// or directory; ``CredentialStoreError/reason`` names the call and its `errno`.
        public static let fileSystemFailed = Code(rawValue: "fileSystemFailed")
        /// A Keychain call failed (Apple platforms); ``CredentialStoreError/reason`` names the call
        /// and its `OSStatus`.
        public static let keychainFailed = Code(rawValue: "keychainFailed")
        /// The slot holds a credential another namespace or provider kind wrote, or one without an
        /// owner; it is not served.
        public static let foreignCredential = Code(rawValue: "foreignCredential")
    }

    /// What went wrong.
    public let code: Code
    /// What went wrong, in words: the message without its `Credential store: ` prefix.
    public let reason: String

    /// Creates an error with `code` and `reason` (for codes added in extensions).
    ///
    /// - Parameters:
    ///   - code: What went wrong.
    ///   - reason: What went wrong, in words; never a credential.
    public init(_ code: Code, reason: String) {
        self.code = code
        self.reason = reason
    }

    /// A sentence that says what happened: `Credential store: ` and the ``reason``.
    public var message: String { "Credential store: \(reason)" }

    /// What a log line may say about a store's failure: the message of a ``CredentialStoreError``
    /// (which never holds a token), so a missing Keychain entitlement reads as one; only the type
    /// of any other error, whose text could hold anything.
    public static func summary(of error: any Error) -> String {
        (error as? CredentialStoreError)?.message ?? RequestError.summary(of: error)
    }

    // MARK: Making errors

    /// The identity is not 1 to 100 UTF-8 bytes.
    public static let invalidIdentity = CredentialStoreError(.invalidIdentity, reason: "an identity has 1 to 100 UTF-8 bytes")

    /// The store's directory is refused, for `reason`.
    public static func unsafeDirectory(_ reason: String) -> CredentialStoreError {
        CredentialStoreError(.unsafeDirectory, reason: reason)
    }

    /// The credential file is refused without being read, for `reason`.
    public static func unsafeFile(_ reason: String) -> CredentialStoreError {
        CredentialStoreError(.unsafeFile, reason: reason)
    }

    /// The credential file is not a credential for the identity; it is ignored.
    public static let unreadableCredential = CredentialStoreError(
        .unreadableCredential, reason: "the stored credential for this identity is unreadable; it is ignored")

    /// The credential takes `size` bytes in the store, more than its `limit`: a store never saves
    /// what it would refuse to read back.
    public static func credentialTooLarge(size: Int, limit: Int) -> CredentialStoreError {
        CredentialStoreError(.credentialTooLarge, reason: "the credential takes \(size) bytes, more than the \(limit) the store keeps; it is not saved")
    }

    /// The slot holds a credential `writtenBy` wrote (`nil`: no owner recorded), not `expected`;
    /// it is not served. The message names both owners, never the token.
    public static func foreignCredential(writtenBy owner: CredentialOwner?, expected: CredentialOwner) -> CredentialStoreError {
        CredentialStoreError(.foreignCredential, reason: "the stored credential for this identity was written by \(owner.map { "\($0)" } ?? "no recorded owner (an earlier version, or the app)"), not \(expected); it is not served")
    }

    /// A file-system call failed, for `reason` (the call and its `errno`).
    public static func fileSystemFailed(_ reason: String) -> CredentialStoreError {
        CredentialStoreError(.fileSystemFailed, reason: reason)
    }

    /// A Keychain call failed: `call` is what was tried (`read`, `save`, `remove`), `status` the
    /// `OSStatus` it returned. A missing entitlement (`errSecMissingEntitlement`, -34018: an unsigned
    /// command-line tool on macOS, say) says so and what to do instead.
    public static func keychainFailed(_ call: String, status: Int32) -> CredentialStoreError {
        if status == KeychainStatus.missingEntitlement {
            return CredentialStoreError(.keychainFailed, reason: "could not \(call) the Keychain item (OSStatus \(status)): this process has no Keychain entitlement (an unsigned command-line tool has none); sign it with a keychain-access-groups entitlement, or use FileCredentialStore")
        }
        return CredentialStoreError(.keychainFailed, reason: "could not \(call) the Keychain item (OSStatus \(status))")
    }
}

extension Credential.Identity {
    /// Whether two identities are the same user: the same UTF-8 bytes (``CredentialStore``'s rule),
    /// not `String`'s canonical equivalence.
    static func same(_ lhs: String, _ rhs: String) -> Bool { lhs.utf8.elementsEqual(rhs.utf8) }

    /// The identity's UTF-8 bytes in lowercase hexadecimal: a name that differs whenever the bytes
    /// differ (a file name, a Keychain account).
    static func hexadecimal(_ identity: String) -> String {
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: identity.utf8.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] }, as: UTF8.self)
    }
}

/// A string as a dictionary key or set member by its exact UTF-8 bytes: unlike `String`, whose
/// `==` and hashing follow canonical equivalence, `"jos\u{E9}"` and `"jose\u{301}"` are two keys.
/// For identities and user IDs (``CredentialStore``'s rule).
struct ExactBytesKey: Hashable, Sendable, CustomStringConvertible {
    /// The string, as given.
    let string: String

    init(_ string: String) { self.string = string }

    static func == (lhs: ExactBytesKey, rhs: ExactBytesKey) -> Bool { Credential.Identity.same(lhs.string, rhs.string) }

    func hash(into hasher: inout Hasher) {
        hasher.combine(string.utf8.count)
        for byte in string.utf8 { hasher.combine(byte) }
    }

    var description: String { string }
}
