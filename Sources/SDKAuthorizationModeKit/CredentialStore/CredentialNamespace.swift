import Foundation
import SDKAuthorization

/// The SDK (the tenant) a credential store, a request journal or any other state on disk belongs
/// to: every SDK built on this framework in one app names its own, usually its bundle identifier.
///
/// Two SDKs in one app, or one SDK and the app, get separate credential stores and queue files
/// only through their namespaces: the default ``FileCredentialStore`` directory is a subdirectory
/// named after it, the default `KeychainCredentialStore` service ends with it, and every stored
/// credential records it (``CredentialOwner``), so a store never serves a credential another
/// namespace wrote.
///
/// ```swift
/// let namespace = try CredentialNamespace("com.example.chat-sdk")
/// let store = PlatformCredentialStore(namespace: namespace)
/// ```
///
/// A name is reverse-DNS: 3 to 100 ASCII bytes, at least two labels separated by `.`, each label
/// one or more letters, digits, `-` or `_`. Names compare as exact bytes (`com.Example.sdk` and
/// `com.example.sdk` are two namespaces; on a case-insensitive file system they share a directory,
/// and each refuses the other's credentials).
public struct CredentialNamespace: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The name, as given.
    public let name: String

    /// The longest name, in bytes.
    static let maximumLength = 100

    /// Checks `name` and makes it a namespace.
    ///
    /// - Throws: `ConfigurationError/invalidValue(key:reason:)` with key `namespace` for a name
    ///   that is empty, longer than 100 bytes, not ASCII letters, digits, `-`, `_` and `.`, or not
    ///   at least two non-empty labels separated by `.`.
    public init(_ name: String) throws(ConfigurationError) {
        guard (3...Self.maximumLength).contains(name.utf8.count) else {
            throw .invalidValue(key: "namespace", reason: "must be 3 to 100 bytes, reverse-DNS such as your bundle identifier (com.example.sdk)")
        }
        let bytes = Array(name.utf8)
        guard bytes.allSatisfy({ $0 == UInt8(ascii: ".") || Self.isLabelByte($0) }) else {
            throw .invalidValue(key: "namespace", reason: "may hold only ASCII letters, digits, '-', '_' and '.' (reverse-DNS such as com.example.sdk)")
        }
        let labels = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard labels.count >= 2, labels.allSatisfy({ !$0.isEmpty }) else {
            throw .invalidValue(key: "namespace", reason: "must be at least two non-empty labels separated by '.' (reverse-DNS such as com.example.sdk)")
        }
        self.name = name
    }

    /// Decodes a name and checks it as ``init(_:)`` does.
    public init(from decoder: any Decoder) throws {
        let name = try decoder.singleValueContainer().decode(String.self)
        do {
            try self.init(name)
        } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.message))
        }
    }

    /// Encodes the name.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(name)
    }

    /// Whether the two names have the same bytes.
    public static func == (lhs: CredentialNamespace, rhs: CredentialNamespace) -> Bool {
        lhs.name.utf8.elementsEqual(rhs.name.utf8)
    }

    /// Hashes the name's bytes.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(ExactBytesKey(name))
    }

    /// The name.
    public var description: String { name }

    private static func isLabelByte(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || (0x30...0x39).contains(byte)
            || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
    }
}

/// The kind of provider that keeps a credential in a ``CredentialStore``, and which instance of it:
/// each kind has its own slot per identity, and each ``instance`` its own slot within the kind; a
/// store serves a kind only the credential that kind (and instance) wrote.
///
/// The framework's modes use ``idToken`` (`IDTokenStore`) and ``tokenExchange``
/// (`TokenExchangeProvider`), each for its own instance by default: a token-exchange provider names
/// its exchange URL, an ID token store its authorized domains, so two providers of one mode (a
/// second region, staging beside production) sharing one store and one user never load each
/// other's token. A provider of your own names its own kind, and its instance with
/// ``scoped(to:)`` when one app may run several.
public struct CredentialKind: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    /// The kind's name: 1 to 24 lowercase ASCII letters, digits and `-`.
    public let rawValue: String
    /// The provider instance the slot belongs to (an endpoint URL, say), or `nil` for the kind's one
    /// slot. Compared as exact bytes; recorded in the ``CredentialOwner`` of what it saves.
    public let instance: String?

    /// The longest instance name, in UTF-8 bytes.
    static let maximumInstanceLength = 512

    /// A kind named `rawValue`, or `nil` when it is not 1 to 24 lowercase ASCII letters, digits and `-`.
    public init?(rawValue: String) {
        guard Self.isValidName(rawValue) else { return nil }
        self.rawValue = rawValue
        self.instance = nil
    }

    private init(known rawValue: String, instance: String? = nil) {
        self.rawValue = rawValue
        self.instance = instance
    }

    private static func isValidName(_ name: String) -> Bool {
        (1...24).contains(name.utf8.count)
            && name.utf8.allSatisfy({ $0 == UInt8(ascii: "-") || (0x30...0x39).contains($0) || (0x61...0x7A).contains($0) })
    }

    /// This kind for one provider instance, `name` (such as its endpoint URL; 1 to 512 UTF-8 bytes,
    /// longer names are cut): a slot of its own per identity, refused to every other instance.
    public func scoped(to name: String) -> CredentialKind {
        CredentialKind(known: rawValue, instance: String(decoding: name.utf8.prefix(Self.maximumInstanceLength), as: UTF8.self))
    }

    private enum CodingKeys: String, CodingKey { case name, instance }

    /// Decodes a kind: its name (refusing one ``init(rawValue:)`` refuses), or its name and instance.
    public init(from decoder: any Decoder) throws {
        let name: String
        var instance: String?
        if let single = try? decoder.singleValueContainer().decode(String.self) {
            name = single
        } else {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            name = try container.decode(String.self, forKey: .name)
            instance = try container.decode(String.self, forKey: .instance)
        }
        guard Self.isValidName(name), (instance?.utf8.count ?? 1) <= Self.maximumInstanceLength else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a credential kind"))
        }
        self.init(known: name, instance: instance)
    }

    /// Encodes the name, or the name and the instance.
    public func encode(to encoder: any Encoder) throws {
        guard let instance else {
            var container = encoder.singleValueContainer()
            try container.encode(rawValue)
            return
        }
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(rawValue, forKey: .name)
        try container.encode(instance, forKey: .instance)
    }

    /// Whether the two kinds have the same name and the same instance (exact bytes).
    public static func == (lhs: CredentialKind, rhs: CredentialKind) -> Bool {
        lhs.rawValue == rhs.rawValue && lhs.instance.map(ExactBytesKey.init) == rhs.instance.map(ExactBytesKey.init)
    }

    /// Hashes the name and the instance's bytes.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(rawValue)
        hasher.combine(instance.map(ExactBytesKey.init))
    }

    /// The ID token of the refresh-callback mode (`IDTokenStore`).
    public static let idToken = CredentialKind(known: "idtoken")
    /// The exchanged auth token of the token-exchange mode (`TokenExchangeProvider`).
    public static let tokenExchange = CredentialKind(known: "token-exchange")

    /// The kind's name, and its instance when it has one (`token-exchange for https://...`).
    public var description: String {
        instance.map { "\(rawValue) for \(LogText.escaped($0, limit: 120))" } ?? rawValue
    }

    /// The slot's name in a store: the kind's name, then `.` and a digest of the instance (8
    /// hexadecimal digits of its FNV-1a hash) when it has one. `.` is no kind's character, so an
    /// instance's slot never shares a name with a kind's own; two instances whose digests meet share
    /// a slot, and each refuses the other's credential (the owner records the whole instance).
    var slotName: String {
        guard let instance else { return rawValue }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in instance.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        let folded = UInt32(truncatingIfNeeded: hash ^ (hash >> 32))
        let digits = String(folded, radix: 16)
        return "\(rawValue).\(String(repeating: "0", count: 8 - digits.count))\(digits)"
    }
}

/// Who wrote a stored credential: the store's ``CredentialNamespace`` and the ``CredentialKind``
/// (with its instance) of the provider that saved it. A ``CredentialStore`` records it with every
/// credential a provider saves and serves the credential only to the same namespace, kind and instance.
public struct CredentialOwner: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The SDK that wrote the credential.
    public let namespace: CredentialNamespace
    /// The kind of provider that wrote it.
    public let kind: CredentialKind

    /// Creates an owner.
    public init(namespace: CredentialNamespace, kind: CredentialKind) {
        self.namespace = namespace
        self.kind = kind
    }

    /// `<kind> of <namespace>`, such as `token-exchange of com.example.sdk` (the kind names its
    /// instance, if any).
    public var description: String { "\(kind) of \(namespace)" }

    /// Throws ``CredentialStoreError/foreignCredential(writtenBy:expected:)`` unless `credential`
    /// was written by `self`; a credential without an owner (written before owners were recorded,
    /// or by the app itself) is refused too.
    func check(_ credential: StoredCredential) throws(CredentialStoreError) {
        guard credential.owner == self else { throw .foreignCredential(writtenBy: credential.owner, expected: self) }
    }

    /// Throws ``CredentialStoreError/Code/foreignCredential`` when the slot holds `existing`, a
    /// credential another owner wrote: a slot is private to its owner on save too, so two SDKs whose
    /// stores share a folder never overwrite each other's tokens. A credential without an owner
    /// (written before owners were recorded) is replaced; an unreadable one (`nil`) too.
    func checkMayReplace(_ existing: StoredCredential?) throws(CredentialStoreError) {
        guard let owner = existing?.owner, owner != self else { return }
        throw CredentialStoreError(.foreignCredential, reason: "the slot for this identity holds a credential \(owner) wrote, not \(self); it is left as it is, and the new one is not saved")
    }

    /// Whether a provider of this owner may remove `existing`, what its slot holds (`nil`: nothing
    /// readable): only what it wrote itself, or what no one can read.
    func mayRemove(_ existing: StoredCredential?) -> Bool {
        existing.map { $0.owner == self } ?? true
    }
}

extension CredentialStore {
    /// Reads the identity's single slot (``load(identity:)``) and serves what it holds only when
    /// this store's ``namespace`` and `kind` wrote it.
    public func load(identity: String, kind: CredentialKind) throws -> StoredCredential? {
        guard let credential = try load(identity: identity) else { return nil }
        try CredentialOwner(namespace: namespace, kind: kind).check(credential)
        return credential
    }

    /// Records this store's ``namespace`` and `kind` as the credential's owner and saves it in the
    /// identity's single slot (``save(_:identity:)``), replacing whatever was there.
    public func save(_ credential: StoredCredential, identity: String, kind: CredentialKind) throws {
        var owned = credential
        owned.owner = CredentialOwner(namespace: namespace, kind: kind)
        try save(owned, identity: identity)
    }

    /// Removes the identity's single slot (``remove(identity:)``) unless it holds a credential
    /// another namespace or kind wrote, which is left alone.
    public func remove(identity: String, kind: CredentialKind) throws {
        if let credential = try? load(identity: identity), credential.owner != CredentialOwner(namespace: namespace, kind: kind) { return }
        try remove(identity: identity)
    }
}
