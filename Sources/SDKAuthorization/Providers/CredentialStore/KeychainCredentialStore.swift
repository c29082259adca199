import Foundation

#if canImport(Security)
import Security

/// The platform's usual home for credentials: ``KeychainCredentialStore`` on Apple platforms,
/// ``FileCredentialStore`` elsewhere. `PlatformCredentialStore()` makes one with its defaults.
public typealias PlatformCredentialStore = KeychainCredentialStore

/// The ``CredentialStore`` for Apple platforms: one generic-password item of the Keychain per
/// identity, readable after the device's first unlock and never synced or restored to another
/// device (`kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`).
///
/// - Items are found by ``service`` and the identity (the account), in ``accessGroup`` when one is
///   given (to share them between an app and its extensions).
/// - `save` updates the identity's item, or adds it: the item is replaced whole.
/// - An item is read up to 64 KB; one that is not a credential for its identity counts as none
///   (``load(identity:)`` throws ``CredentialStoreError/unreadableCredential``).
/// - Identities are 1 to 100 UTF-8 bytes, as for ``FileCredentialStore``.
/// - A Keychain call that fails throws ``CredentialStoreError`` with code
///   ``CredentialStoreError/Code/keychainFailed`` and the `OSStatus`; no error holds a token.
///
/// Built only where the Security framework exists (`#if canImport(Security)`).
public final class KeychainCredentialStore: CredentialStore, Sendable {
    /// The Keychain service the items belong to.
    public let service: String
    /// The Keychain access group, or `nil` for the app's default group.
    public let accessGroup: String?

    /// Creates a store for `service`, in `accessGroup` when one is given.
    public init(service: String = "SDKAuthorization.credentials", accessGroup: String? = nil) {
        self.service = service
        self.accessGroup = accessGroup
    }

    private struct Item: Codable {
        let identity: String
        let credential: StoredCredential
    }

    /// The largest item read.
    private static let maximumItemSize = 65_536

    public func load(identity: String) throws -> StoredCredential? {
        var query = try baseQuery(identity)
        query[kSecReturnData as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        if status == errSecItemNotFound { return nil }
        guard status == errSecSuccess else { throw CredentialStoreError.keychainFailed("read", status: status) }
        guard let data = result as? Data, data.count <= Self.maximumItemSize,
              let item = try? JSONDecoder().decode(Item.self, from: data), item.identity == identity
        else { throw CredentialStoreError.unreadableCredential }
        return item.credential
    }

    public func save(_ credential: StoredCredential, identity: String) throws {
        let query = try baseQuery(identity)
        let data = try JSONEncoder().encode(Item(identity: identity, credential: credential))
        let attributes: [String: Any] = [
            kSecValueData as String: data,
            kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
        ]
        var status = SecItemUpdate(query as CFDictionary, attributes as CFDictionary)
        if status == errSecItemNotFound {
            var item = query
            for (key, value) in attributes { item[key] = value }
            status = SecItemAdd(item as CFDictionary, nil)
        }
        guard status == errSecSuccess else { throw CredentialStoreError.keychainFailed("save", status: status) }
    }

    public func remove(identity: String) throws {
        let query = try baseQuery(identity)
        let status = SecItemDelete(query as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else { throw CredentialStoreError.keychainFailed("remove", status: status) }
    }

    /// The attributes that find the item of `identity`.
    private func baseQuery(_ identity: String) throws(CredentialStoreError) -> [String: Any] {
        guard CredentialIdentity.isValid(identity) else { throw .invalidIdentity }
        var query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: identity,
        ]
        if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
        if #available(macOS 10.15, iOS 13.0, tvOS 13.0, watchOS 6.0, *) {
            // The iOS-style Keychain on macOS too: no legacy keychain file, no access prompts.
            query[kSecUseDataProtectionKeychain as String] = true
        }
        return query
    }
}
#else
/// The platform's usual home for credentials: `KeychainCredentialStore` on Apple platforms,
/// ``FileCredentialStore`` elsewhere. `PlatformCredentialStore()` makes one with its defaults.
public typealias PlatformCredentialStore = FileCredentialStore
#endif
