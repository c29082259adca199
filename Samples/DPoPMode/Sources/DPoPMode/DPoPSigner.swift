import Crypto
import Foundation
import SDKAuthorizationModeKit

/// The app's DPoP key: its public half, which every proof carries in its `jwk` header, and the
/// signature of each proof (ES256, RFC 9449 §4.2).
///
/// ``P256DPoPSigner`` holds a swift-crypto key in memory; an app that keeps its key elsewhere (the
/// Secure Enclave, a hardware token, a key server) conforms its own type:
///
/// ```swift
/// struct EnclaveSigner: DPoPSigner {
///     let key: SecureEnclave.P256.Signing.PrivateKey
///     var publicKey: P256.Signing.PublicKey { key.publicKey }
///     func sign(_ signingInput: Data) async throws -> Data { try key.signature(for: signingInput).rawRepresentation }
/// }
/// ```
///
/// A signer's `description` and mirror must not show its private key.
public protocol DPoPSigner: Sendable {
    /// The public key every proof carries.
    var publicKey: P256.Signing.PublicKey { get }

    /// The ES256 signature of `signingInput` (the proof's `base64url(header).base64url(claims)`) as
    /// the raw 64 bytes `r || s`, not DER. May throw, which fails the request with
    /// `RequestError/Code/dpopSigningFailed`.
    func sign(_ signingInput: Data) async throws -> Data
}

/// A ``DPoPSigner`` over a P-256 key in memory, by default a fresh one per instance, so each launch
/// proves possession of a new key (and fetches a new token). Its `description` and mirror show only
/// the public key.
public struct P256DPoPSigner: DPoPSigner, CustomStringConvertible, CustomReflectable {
    private let privateKey: P256.Signing.PrivateKey

    /// A signer with `privateKey` (one the app keeps between launches, say), or a fresh random key.
    public init(privateKey: P256.Signing.PrivateKey = P256.Signing.PrivateKey()) {
        self.privateKey = privateKey
    }

    public var publicKey: P256.Signing.PublicKey { privateKey.publicKey }

    public func sign(_ signingInput: Data) async throws -> Data {
        try privateKey.signature(for: signingInput).rawRepresentation
    }

    /// The public key's x coordinate only.
    public var description: String { "P256DPoPSigner(public key x: \(Base64URL.encode(Data(publicKey.rawRepresentation.prefix(32)))))" }

    /// The description only: no child shows the private key.
    public var customMirror: Mirror { Mirror(self, children: ["description": description], displayStyle: .struct) }
}
