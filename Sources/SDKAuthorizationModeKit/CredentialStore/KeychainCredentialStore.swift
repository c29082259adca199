import Foundation
import SDKAuthorization
#if canImport(Security)
import Security
#endif

// MARK: The seam: the four Keychain calls

/// Where one Keychain item lives: a generic password of `service` and `account`, in `accessGroup`
/// when one is given.
struct KeychainItemKey: Hashable, Sendable {
    let service: String
    /// The identity's UTF-8 bytes in hexadecimal (`Credential.Identity.hexadecimal(_:)`), so two
    /// identities with different bytes never share an item, whatever the Keychain compares;
    /// preceded by `<kind>:` for a provider kind's slot (`<kind>.<instance digest>:` for an
    /// instance's, ``CredentialKind/slotName``).
    let account: String
    let accessGroup: String?
}

/// The Keychain calls the store makes, each answering with an `OSStatus`: `SecItemAdd`,
/// `SecItemUpdate`, `SecItemCopyMatching` and `SecItemDelete` on Apple platforms
/// (``SecurityKeychain``), an in-memory keychain in tests, so the store's logic runs everywhere.
protocol KeychainItems: Sendable {
    /// Adds an item with `data`; ``KeychainStatus/duplicateItem`` when one exists.
    func add(_ key: KeychainItemKey, data: Data) -> Int32
    /// Replaces the data of the existing item; ``KeychainStatus/itemNotFound`` when there is none.
    func update(_ key: KeychainItemKey, data: Data) -> Int32
    /// The item's data.
    func copy(_ key: KeychainItemKey) -> (status: Int32, data: Data?)
    /// Deletes the item.
    func delete(_ key: KeychainItemKey) -> Int32
}

/// The `OSStatus` values the store tells apart: the Security framework's, spelled out so the
/// store's logic builds where that framework does not exist.
enum KeychainStatus {
    /// `errSecSuccess`.
    static let success: Int32 = 0
    /// `errSecItemNotFound`.
    static let itemNotFound: Int32 = -25_300
    /// `errSecDuplicateItem`.
    static let duplicateItem: Int32 = -25_299
    /// `errSecMissingEntitlement`: the data-protection keychain needs an entitlement the process
    /// lacks (an unsigned command-line tool on macOS).
    static let missingEntitlement: Int32 = -34_018
}

// MARK: The store's logic, on every platform

/// The Keychain credential store's logic over any ``KeychainItems``: one item per identity, holding
/// the identity and the credential as JSON. `KeychainCredentialStore` is this over the Security
/// framework; tests run it over an in-memory keychain.
final class KeychainItemStore: CredentialStore, Sendable {
    let namespace: CredentialNamespace
    let service: String
    let accessGroup: String?
    private let keychain: any KeychainItems

    /// The largest item read.
    static let maximumItemSize = 65_536

    /// The default service of `namespace`'s items.
    static func defaultService(for namespace: CredentialNamespace) -> String {
        "SDKAuthorization.credentials.\(namespace.name)"
    }

    init(namespace: CredentialNamespace, service: String? = nil, accessGroup: String?, keychain: any KeychainItems) {
        self.namespace = namespace
        self.service = service ?? Self.defaultService(for: namespace)
        self.accessGroup = accessGroup
        self.keychain = keychain
    }

    private struct Item: Codable {
        let identity: String
        let credential: StoredCredential
    }

    func load(identity: String) throws -> StoredCredential? {
        try load(identity: identity, key: key(identity, kind: nil))
    }

    func save(_ credential: StoredCredential, identity: String) throws {
        try save(credential, identity: identity, key: key(identity, kind: nil))
    }

    func remove(identity: String) throws {
        try remove(key: key(identity, kind: nil))
    }

    func load(identity: String, kind: CredentialKind) throws -> StoredCredential? {
        guard let credential = try load(identity: identity, key: key(identity, kind: kind)) else { return nil }
        try CredentialOwner(namespace: namespace, kind: kind).check(credential)
        return credential
    }

    func save(_ credential: StoredCredential, identity: String, kind: CredentialKind) throws {
        let owner = CredentialOwner(namespace: namespace, kind: kind)
        let key = try key(identity, kind: kind)
        // An item another namespace, kind or instance wrote (one service two stores share) is theirs.
        try owner.checkMayReplace(try? load(identity: identity, key: key))
        var owned = credential
        owned.owner = owner
        try save(owned, identity: identity, key: key)
    }

    func remove(identity: String, kind: CredentialKind) throws {
        let key = try key(identity, kind: kind)
        guard CredentialOwner(namespace: namespace, kind: kind).mayRemove(try? load(identity: identity, key: key)) else { return }
        try remove(key: key)
    }

    private func load(identity: String, key: KeychainItemKey) throws -> StoredCredential? {
        let (status, data) = keychain.copy(key)
        if status == KeychainStatus.itemNotFound { return nil }
        guard status == KeychainStatus.success else { throw CredentialStoreError.keychainFailed("read", status: status) }
        guard let data, data.count <= Self.maximumItemSize,
              let item = try? JSONDecoder().decode(Item.self, from: data), Credential.Identity.same(item.identity, identity)
        else { throw CredentialStoreError.unreadableCredential }
        return item.credential
    }

    private func save(_ credential: StoredCredential, identity: String, key: KeychainItemKey) throws {
        let data = try JSONEncoder().encode(Item(identity: identity, credential: credential))
        guard data.count <= Self.maximumItemSize else { throw CredentialStoreError.credentialTooLarge(size: data.count, limit: Self.maximumItemSize) }
        var status = keychain.update(key, data: data)
        if status == KeychainStatus.itemNotFound {
            status = keychain.add(key, data: data)
            // Another first save of this identity added the item since: replace it, so the later
            // save wins instead of failing.
            if status == KeychainStatus.duplicateItem { status = keychain.update(key, data: data) }
        }
        guard status == KeychainStatus.success else { throw CredentialStoreError.keychainFailed("save", status: status) }
    }

    private func remove(key: KeychainItemKey) throws {
        let status = keychain.delete(key)
        guard status == KeychainStatus.success || status == KeychainStatus.itemNotFound else {
            throw CredentialStoreError.keychainFailed("remove", status: status)
        }
    }

    private func key(_ identity: String, kind: CredentialKind?) throws(CredentialStoreError) -> KeychainItemKey {
        guard Credential.Identity.isValid(identity) else { throw .invalidIdentity }
        return KeychainItemKey(service: service, account: "\(kind.map { "\($0.slotName):" } ?? "")\(Credential.Identity.hexadecimal(identity))",
                               accessGroup: accessGroup)
    }
}

#if canImport(Security)
/// The platform's usual home for credentials: ``KeychainCredentialStore`` on Apple platforms,
/// ``FileCredentialStore`` elsewhere. `PlatformCredentialStore(namespace:)` makes the namespace's
/// store with the defaults.
public typealias PlatformCredentialStore = KeychainCredentialStore

/// The ``CredentialStore`` for Apple platforms: one generic-password item of the Keychain per
/// identity, readable after the device's first unlock and never synced or restored to another
/// device (`kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`).
///
/// - Items are found by ``service`` (by default `SDKAuthorization.credentials.<namespace>`, one
///   per ``namespace``) and the identity (the account: the hexadecimal form of its UTF-8 bytes, so
///   identities compare as exact bytes, as ``CredentialStore`` says, preceded by `<kind>:` for a
///   provider kind's slot, by `<kind>.<instance digest>:` for a provider instance's), in ``accessGroup`` when one is given (to share them between an app and
///   its extensions).
/// - Each item a provider saves records its ``CredentialOwner``; an item another namespace, kind
///   or instance wrote, or one without an owner, is refused with ``CredentialStoreError/Code/foreignCredential``.
/// - `save` updates the identity's item, or adds it: the item is replaced whole. Two first saves
///   of one identity at once both succeed; the later one's credential is kept.
/// - An item is read up to 64 KB; one that is not a credential for its identity counts as none
///   (``load(identity:)`` throws ``CredentialStoreError/unreadableCredential``).
/// - Identities are 1 to 100 UTF-8 bytes, as for ``FileCredentialStore``.
/// - A Keychain call that fails throws ``CredentialStoreError`` with code
///   ``CredentialStoreError/Code/keychainFailed`` and the `OSStatus`; no error holds a token. A
///   process without a Keychain entitlement (an unsigned command-line tool on macOS) gets an error
///   that says so; the providers then keep their token in memory only. Such a tool can use
///   ``FileCredentialStore`` instead.
///
/// Built only where the Security framework exists (`#if canImport(Security)`).
public final class KeychainCredentialStore: CredentialStore, Sendable {
    /// The SDK whose credentials this store keeps.
    public let namespace: CredentialNamespace
    /// The Keychain service the items belong to.
    public let service: String
    /// The Keychain access group, or `nil` for the app's default group.
    public let accessGroup: String?
    private let items: KeychainItemStore

    /// Creates the store of `namespace` for `service` (by default
    /// `SDKAuthorization.credentials.<namespace>`), in `accessGroup` when one is given.
    public init(namespace: CredentialNamespace, service: String? = nil, accessGroup: String? = nil) {
        let items = KeychainItemStore(namespace: namespace, service: service, accessGroup: accessGroup, keychain: SecurityKeychain())
        self.items = items
        self.namespace = namespace
        self.service = items.service
        self.accessGroup = accessGroup
    }

    public func load(identity: String) throws -> StoredCredential? {
        try items.load(identity: identity)
    }

    public func save(_ credential: StoredCredential, identity: String) throws {
        try items.save(credential, identity: identity)
    }

    public func remove(identity: String) throws {
        try items.remove(identity: identity)
    }

    public func load(identity: String, kind: CredentialKind) throws -> StoredCredential? {
        try items.load(identity: identity, kind: kind)
    }

    public func save(_ credential: StoredCredential, identity: String, kind: CredentialKind) throws {
        try items.save(credential, identity: identity, kind: kind)
    }

    public func remove(identity: String, kind: CredentialKind) throws {
        try items.remove(identity: identity, kind: kind)
    }
}

/// The Keychain of the Security framework: each call is one `SecItem*` call.
struct SecurityKeychain: KeychainItems {
    func add(_ key: KeychainItemKey, data: Data) -> Int32 {
        var item = query(key)
        item[kSecValueData as String] = data
        item[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
        return SecItemAdd(item as CFDictionary, nil)
    }

    func update(_ key: KeychainItemKey, data: Data) -> Int32 {
        let attributes: [String: Any] = [
            kSecValueData as String: data,
            kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
        ]
        return SecItemUpdate(query(key) as CFDictionary, attributes as CFDictionary)
    }

    func copy(_ key: KeychainItemKey) -> (status: Int32, data: Data?) {
        var search = query(key)
        search[kSecReturnData as String] = true
        search[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: CFTypeRef?
        let status = SecItemCopyMatching(search as CFDictionary, &result)
        return (status, result as? Data)
    }

    func delete(_ key: KeychainItemKey) -> Int32 {
        SecItemDelete(query(key) as CFDictionary)
    }

    /// The attributes that find the item.
    private func query(_ key: KeychainItemKey) -> [String: Any] {
        var query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: key.service,
            kSecAttrAccount as String: key.account,
        ]
        if let accessGroup = key.accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
        if #available(macOS 10.15, iOS 13.0, tvOS 13.0, watchOS 6.0, *) {
            // The iOS-style Keychain on macOS too: no legacy keychain file, no access prompts.
            query[kSecUseDataProtectionKeychain as String] = true
        }
        return query
    }
}
#else
/// The platform's usual home for credentials: `KeychainCredentialStore` on Apple platforms,
/// ``FileCredentialStore`` elsewhere. `PlatformCredentialStore(namespace:)` makes the namespace's
/// store with the defaults.
public typealias PlatformCredentialStore = FileCredentialStore
#endif
