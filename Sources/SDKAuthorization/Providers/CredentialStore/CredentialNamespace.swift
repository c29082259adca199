import Foundation

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

/// The kind of provider that keeps a credential in a ``CredentialStore``: each kind has its own
/// slot per identity, and a store serves a kind only the credential that kind wrote.
///
/// The framework's modes use ``idToken`` (`IDTokenStore`) and ``tokenExchange``
/// (`TokenExchangeProvider`); a provider of your own names its own kind.
public struct CredentialKind: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    /// The kind's name: 1 to 24 lowercase ASCII letters, digits and `-`.
    public let rawValue: String

    /// A kind named `rawValue`, or `nil` when it is not 1 to 24 lowercase ASCII letters, digits and `-`.
    public init?(rawValue: String) {
        guard (1...24).contains(rawValue.utf8.count),
              rawValue.utf8.allSatisfy({ $0 == UInt8(ascii: "-") || (0x30...0x39).contains($0) || (0x61...0x7A).contains($0) })
        else { return nil }
        self.rawValue = rawValue
    }

    private init(known rawValue: String) { self.rawValue = rawValue }

    /// Decodes a kind, refusing a name ``init(rawValue:)`` refuses.
    public init(from decoder: any Decoder) throws {
        let name = try decoder.singleValueContainer().decode(String.self)
        guard let kind = CredentialKind(rawValue: name) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a credential kind"))
        }
        self = kind
    }

    /// Encodes the name.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    /// The ID token of the refresh-callback mode (`IDTokenStore`).
    public static let idToken = CredentialKind(known: "idtoken")
    /// The exchanged auth token of the token-exchange mode (`TokenExchangeProvider`).
    public static let tokenExchange = CredentialKind(known: "token-exchange")

    /// The kind's name.
    public var description: String { rawValue }
}

/// Who wrote a stored credential: the store's ``CredentialNamespace`` and the ``CredentialKind``
/// of the provider that saved it. A ``CredentialStore`` records it with every credential a provider
/// saves and serves the credential only to the same namespace and kind.
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

    /// `<kind> of <namespace>`, such as `token-exchange of com.example.sdk`.
    public var description: String { "\(kind) of \(namespace)" }

    /// Throws ``CredentialStoreError/foreignCredential(writtenBy:expected:)`` unless `credential`
    /// was written by `self`; a credential without an owner (written before owners were recorded,
    /// or by the app itself) is refused too.
    func check(_ credential: StoredCredential) throws(CredentialStoreError) {
        guard credential.owner == self else { throw .foreignCredential(writtenBy: credential.owner, expected: self) }
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
