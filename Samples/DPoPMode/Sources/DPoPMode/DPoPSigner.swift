import Crypto
import Foundation
import SDKAuthorizationModeKit

/// The public half of a DPoP key, as a proof's `jwk` header carries it (RFC 7518 §6.2: an `EC` key
/// on `P-256`, its coordinates `x` and `y`, 32 bytes each).
public struct DPoPPublicJWK: Sendable, Equatable, CustomStringConvertible {
    /// The x coordinate, 32 bytes big-endian.
    public let x: Data
    /// The y coordinate, 32 bytes big-endian.
    public let y: Data

    /// A key of coordinates `x` and `y`, 32 bytes each (a key of other sizes makes every proof
    /// fail with `RequestError/Code/dpopSigningFailed`).
    public init(x: Data, y: Data) {
        self.x = x
        self.y = y
    }

    /// The key of a swift-crypto P-256 public key.
    public init(_ key: P256.Signing.PublicKey) {
        let raw = key.rawRepresentation
        self.init(x: Data(raw.prefix(32)), y: Data(raw.suffix(32)))
    }

    /// Whether both coordinates are 32 bytes, as P-256 needs.
    public var isP256: Bool { x.count == 32 && y.count == 32 }

    /// The `jwk` member of a proof's header (the writer sorts its members, as RFC 7638 does).
    var jwk: JWTClaimValue {
        .object(["crv": .string("P-256"), "kty": .string("EC"), "x": .string(Base64URL.encode(x)), "y": .string(Base64URL.encode(y))])
    }

    /// The coordinates (public, as a proof shows them).
    public var description: String { "DPoPPublicJWK(x: \(Base64URL.encode(x)), y: \(Base64URL.encode(y)))" }
}

/// The app's DPoP key: it gives its public key and signs each proof (ES256, RFC 9449 §4.2).
///
/// ``P256DPoPSigner`` holds a swift-crypto key in memory; an app that keeps its key elsewhere (the
/// Secure Enclave, a hardware token, a key server) conforms its own type.
///
/// ```swift
/// struct EnclaveSigner: DPoPSigner {
///     let key: SecureEnclave.P256.Signing.PrivateKey
///     var publicJWK: DPoPPublicJWK { DPoPPublicJWK(key.publicKey) }
///     func sign(_ signingInput: Data) async throws -> Data { try key.signature(for: signingInput).rawRepresentation }
/// }
/// ```
///
/// A signer's `description` and mirror must not show its private key.
public protocol DPoPSigner: Sendable {
    /// The public key every proof carries in its `jwk` header.
    var publicJWK: DPoPPublicJWK { get }

    /// The ES256 signature of `signingInput` (the proof's `base64url(header).base64url(claims)`):
    /// ECDSA over P-256 with SHA-256, as the raw 64 bytes `r || s` (not DER). May throw, which fails
    /// the request with `RequestError/Code/dpopSigningFailed`.
    func sign(_ signingInput: Data) async throws -> Data
}

/// A ``DPoPSigner`` over a swift-crypto P-256 key kept in memory: a fresh key per instance by
/// default, so each launch of the app proves possession of a new key (and fetches a new token).
///
/// Its `description`, `debugDescription` and mirror show only the public key.
public struct P256DPoPSigner: DPoPSigner, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    private let privateKey: P256.Signing.PrivateKey

    /// A signer with a fresh random key.
    public init() {
        self.init(privateKey: P256.Signing.PrivateKey())
    }

    /// A signer with `privateKey` (one the app keeps between launches, say).
    public init(privateKey: P256.Signing.PrivateKey) {
        self.privateKey = privateKey
    }

    /// The key's public half.
    public var publicJWK: DPoPPublicJWK { DPoPPublicJWK(privateKey.publicKey) }

    /// The raw `r || s` ES256 signature of `signingInput`.
    public func sign(_ signingInput: Data) async throws -> Data {
        try privateKey.signature(for: signingInput).rawRepresentation
    }

    /// The public key only.
    public var description: String { "P256DPoPSigner(public key x: \(Base64URL.encode(publicJWK.x)))" }

    /// As ``description``.
    public var debugDescription: String { description }

    /// The description only: no child shows the private key.
    public var customMirror: Mirror { Mirror(self, children: ["description": description], displayStyle: .struct) }
}
