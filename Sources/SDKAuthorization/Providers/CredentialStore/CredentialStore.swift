import Foundation

/// A credential kept for one identity between launches: the token and, when known, when it expires.
///
/// Its description and mirror never show the token.
public struct StoredCredential: Sendable, Equatable, Codable, CustomStringConvertible, CustomReflectable {
    /// The token.
    public var token: String
    /// When it expires (wall-clock time), if known.
    public var expiresAt: Date?

    /// Creates a stored credential.
    public init(token: String, expiresAt: Date?) {
        self.token = token
        self.expiresAt = expiresAt
    }

    public var description: String {
        "StoredCredential(\(Redaction.redact(token)), expires: \(expiresAt.map { "\($0)" } ?? "unknown"))"
    }

    public var customMirror: Mirror { Mirror(self, children: ["description": description], displayStyle: .struct) }
}

/// Keeps credentials between launches, one per identity (a user, or `default`), so a cold start
/// does not wait for the app.
///
/// The token-exchange mode keeps its exchanged auth token in one; the refresh-callback mode
/// (`IDTokenStore`) can keep its ID token in one, opt-in. ``FileCredentialStore`` is the default;
/// on Apple platforms the Keychain is the better home:
///
/// ```swift
/// import Security
///
/// struct KeychainCredentialStore: CredentialStore {
///     let service = "com.example.sdk.credentials"
///
///     func load(identity: String) throws -> StoredCredential? {
///         var query = baseQuery(identity)
///         query[kSecReturnData as String] = true
///         var item: CFTypeRef?
///         let status = SecItemCopyMatching(query as CFDictionary, &item)
///         guard status != errSecItemNotFound else { return nil }
///         guard status == errSecSuccess, let data = item as? Data else { throw KeychainError(status: status) }
///         return try JSONDecoder().decode(StoredCredential.self, from: data)
///     }
///
///     func save(_ credential: StoredCredential, identity: String) throws {
///         try remove(identity: identity)
///         var query = baseQuery(identity)
///         query[kSecValueData as String] = try JSONEncoder().encode(credential)
///         query[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
///         let status = SecItemAdd(query as CFDictionary, nil)
///         guard status == errSecSuccess else { throw KeychainError(status: status) }
///     }
///
///     func remove(identity: String) throws {
///         let status = SecItemDelete(baseQuery(identity) as CFDictionary)
///         guard status == errSecSuccess || status == errSecItemNotFound else { throw KeychainError(status: status) }
///     }
///
///     private func baseQuery(_ identity: String) -> [String: Any] {
///         [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: identity]
///     }
/// }
///
/// struct KeychainError: Error { let status: OSStatus }
/// ```
///
/// # Implementation requirements
/// Calls may come from any thread, concurrently. `save` replaces the identity's credential whole
/// (never half-written); `remove` of an identity with nothing stored succeeds. Keep the token out
/// of logs and errors.
public protocol CredentialStore: Sendable {
    /// The credential stored for `identity`, or `nil`.
    func load(identity: String) throws -> StoredCredential?
    /// Stores `credential` for `identity`, replacing any before.
    func save(_ credential: StoredCredential, identity: String) throws
    /// Forgets the credential of `identity`.
    func remove(identity: String) throws
}

/// Why a ``FileCredentialStore`` call failed. The description never holds a token.
public struct CredentialStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public let reason: String
    public var description: String { "Credential store: \(reason)" }
}
