import Crypto
import Foundation
import SDKAuthorization
import SDKAuthorizationModeKit

/// Makes DPoP proofs (RFC 9449 §4.2): a JWT of type `dpop+jwt`, signed ES256 by the app's key,
/// whose header carries the public key and whose claims bind it to one request.
struct DPoPProofMaker: Sendable {
    let signer: any DPoPSigner
    let clock: any AuthorizationClock

    /// A proof for `method` at `url`: `jti` 16 random bytes, `htu` the URL without query, fragment
    /// or user info, `iat` the clock's time in whole seconds, `ath` the SHA-256 of `accessToken`
    /// when there is one (a resource request), and `nonce` when the server gave one.
    func proof(method: String, url: URL, accessToken: String?, nonce: String?) async throws(RequestError) -> String {
        let key = signer.publicKey.rawRepresentation
        // The writer sorts the members, as an RFC 7638 thumbprint of the key needs.
        let jwk = JWTClaimValue.object(["crv": .string("P-256"), "kty": .string("EC"),
                                        "x": .string(Base64URL.encode(Data(key.prefix(32)))), "y": .string(Base64URL.encode(Data(key.suffix(32))))])
        let header = JSONWriter.object([("typ", .string("dpop+jwt")), ("alg", .string("ES256")), ("jwk", jwk)])
        var claims: [(name: String, value: JWTClaimValue)] = [
            ("jti", .string(Base64URL.encode(Data((0..<16).map { _ in UInt8.random(in: .min ... .max) })))),
            ("htm", .string(method)),
            ("htu", .string(Self.htu(of: url))),
            ("iat", .number(clock.now().timeIntervalSince1970.rounded(.down))),
        ]
        if let accessToken { claims.append(("ath", .string(Base64URL.encode(Data(SHA256.hash(data: Data(accessToken.utf8))))))) }
        if let nonce { claims.append(("nonce", .string(nonce))) }
        let signingInput = Base64URL.encode(Data(header.utf8)) + "." + Base64URL.encode(Data(JSONWriter.object(claims).utf8))
        let signature: Data
        do {
            signature = try await signer.sign(Data(signingInput.utf8))
        } catch {
            if error is CancellationError || Task.isCancelled { throw .cancelled }
            throw .dpopSigningFailed(reason: "the signer failed (\(RequestError.summary(of: error)))", underlyingError: error)
        }
        guard signature.count == 64 else {
            throw .dpopSigningFailed(reason: "the signer returned \(signature.count) bytes, not a raw 64-byte ES256 signature (r || s)")
        }
        return signingInput + "." + Base64URL.encode(signature)
    }

    /// The URL as `htu` names it: scheme, host, port and path, without query, fragment or user info.
    static func htu(of url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url.absoluteString }
        components.user = nil
        components.password = nil
        components.percentEncodedQuery = nil
        components.fragment = nil
        return components.string ?? url.absoluteString
    }
}
