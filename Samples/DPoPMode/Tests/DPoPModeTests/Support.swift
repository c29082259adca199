import Crypto
import DPoPMode
import Foundation
import SDKAuthorization
import SDKAuthorizationModeKit
import SDKAuthorizationTesting
import Testing

let tokenURL = URL(string: "https://auth.example.com/token")!

/// A proof as a server reads it: header and claims decoded, the signature checked with the key in
/// its own `jwk` header.
struct ReadProof {
    let header: [String: Any]
    let claims: [String: Any]
    /// The key of its `jwk` header, as raw `x || y`.
    let jwk: Data
    let signatureIsValid: Bool

    var jti: String? { claims["jti"] as? String }
    var htm: String? { claims["htm"] as? String }
    var htu: String? { claims["htu"] as? String }
    var ath: String? { claims["ath"] as? String }
    var nonce: String? { claims["nonce"] as? String }
    var iat: Int? { (claims["iat"] as? NSNumber)?.intValue }

    struct Unreadable: Error {}

    init(_ proof: String) throws {
        func need<T>(_ value: T?) throws -> T {
            guard let value else { throw Unreadable() }
            return value
        }
        let parts = proof.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3 else { throw Unreadable() }
        header = try need(try JSONSerialization.jsonObject(with: try need(base64URLDecoded(parts[0]))) as? [String: Any])
        claims = try need(try JSONSerialization.jsonObject(with: try need(base64URLDecoded(parts[1]))) as? [String: Any])
        let key = try need(header["jwk"] as? [String: Any])
        guard key["kty"] as? String == "EC", key["crv"] as? String == "P-256" else { throw Unreadable() }
        jwk = try need(base64URLDecoded(try need(key["x"] as? String))) + need(base64URLDecoded(try need(key["y"] as? String)))
        let publicKey = try P256.Signing.PublicKey(rawRepresentation: jwk)
        let signatureBytes = try need(base64URLDecoded(parts[2]))
        guard signatureBytes.count == 64 else { throw Unreadable() }
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: signatureBytes)
        signatureIsValid = publicKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8))
    }
}

func base64URLDecoded(_ text: String) -> Data? {
    var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    while base64.count % 4 != 0 { base64 += "=" }
    return Data(base64Encoded: base64)
}

func base64URL(_ data: Data) -> String {
    data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
}

/// `base64url(SHA-256(token))`, computed here independently of the mode.
func expectedATH(_ token: String) -> String {
    base64URL(Data(SHA256.hash(data: Data(token.utf8))))
}

/// A 200 token answer for `token`.
func tokenAnswer(_ token: String, expiresIn: String = "600", type: String = "DPoP", headers: [String: String] = [:]) -> RecordingTransport.Answer {
    .response(ServerResponse(statusCode: 200, headers: headers.merging(["Content-Type": "application/json"]) { a, _ in a },
                             body: Data(#"{"access_token":"\#(token)","token_type":"\#(type)","expires_in":\#(expiresIn)}"#.utf8)))
}

/// A 401 from a resource server with a DPoP challenge.
func challenge(_ error: String, nonce: String? = nil) -> RecordingTransport.Answer {
    var headers = ["WWW-Authenticate": #"DPoP error="\#(error)", algs="ES256""#]
    if let nonce { headers["DPoP-Nonce"] = nonce }
    return .response(ServerResponse(statusCode: 401, headers: headers, body: Data(#"{"error":"\#(error)"}"#.utf8)))
}

/// A 400 from the token endpoint.
func tokenRefusal(_ error: String, nonce: String? = nil) -> RecordingTransport.Answer {
    .response(ServerResponse(statusCode: 400, headers: nonce.map { ["DPoP-Nonce": $0] } ?? [:], body: Data(#"{"error":"\#(error)"}"#.utf8)))
}

/// A provider, its signer and key, a recording transport that issues `token-1`, `token-2`, … at the
/// token URL and answers 200 elsewhere, and a client whose rule sends every request to
/// `api.example.com` with the provider's credential.
final class DPoPFixture: Sendable {
    let privateKey = P256.Signing.PrivateKey()
    /// Tokens the server answers `invalid_token` to.
    let revoked = Locked(Set<String>())
    let clock = ManualClock()
    let sink = RecordingDiagnosticsSink()
    let transport: RecordingTransport
    let provider: DPoPProvider
    let client: AuthorizedHTTPClient
    var signer: P256DPoPSigner { P256DPoPSigner(privateKey: privateKey) }

    init(nonceRetry: Bool = true, signer: (any DPoPSigner)? = nil, options: AuthorizationOptions = AuthorizationOptions()) throws {
        let issued = Locked(0)
        let revoked = self.revoked
        transport = RecordingTransport { request in
            guard request.url == tokenURL else {
                if let token = request.value(forHeader: "Authorization")?.dropFirst("DPoP ".count), revoked.withLock({ $0.contains(String(token)) }) {
                    return ServerResponse(statusCode: 401, headers: ["WWW-Authenticate": #"DPoP error="invalid_token", error_description="revoked""#])
                }
                return ServerResponse(statusCode: 200, body: Data("{}".utf8))
            }
            let number = issued.withLock { $0 += 1; return $0 }
            return ServerResponse(statusCode: 200, body: Data(#"{"access_token":"token-\#(number)","token_type":"DPoP","expires_in":600}"#.utf8))
        }
        provider = try DPoPProvider(tokenURL: tokenURL, clientID: "client-1", signer: signer ?? P256DPoPSigner(privateKey: privateKey),
                                    transport: transport, clock: clock, diagnostics: sink, nonceRetry: nonceRetry)
        let policy = AuthorizationPolicy(rules: [try AuthorizationRule(host: "api.example.com", scheme: .bearer)])
        let authorizer = try RequestAuthorizer(policy: policy, providers: [.bearer: provider], options: options, clock: clock, diagnostics: sink)
        client = AuthorizedHTTPClient(authorizer: authorizer, transport: transport)
    }

    func revoke(_ token: String) { revoked.withLock { _ = $0.insert(token) } }

    var tokenRequests: [OutgoingRequest] { transport.requests.filter { $0.url == tokenURL } }
    var resourceRequests: [OutgoingRequest] { transport.requests.filter { $0.url != tokenURL } }

    @discardableResult
    func get(_ path: String = "/items") async throws(RequestError) -> ServerResponse {
        try await client.send(OutgoingRequest(method: "GET", url: URL(string: "https://api.example.com\(path)")!))
    }

    /// Text that must never show a secret: what a token or proof looks like, and the private key.
    func secrets() -> [String] {
        var secrets = transport.requests.compactMap { $0.value(forHeader: "DPoP") }
        secrets += transport.requests.compactMap { $0.value(forHeader: "Authorization") }.map { String($0.dropFirst("DPoP ".count)) }
        secrets += ["token-1", "token-2", base64URL(privateKey.rawRepresentation), privateKey.rawRepresentation.base64EncodedString()]
        return secrets
    }

    func expectNoSecret(in texts: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        for text in texts {
            for secret in secrets() {
                #expect(!text.contains(secret), "\(text) shows a secret", sourceLocation: sourceLocation)
            }
        }
    }
}
