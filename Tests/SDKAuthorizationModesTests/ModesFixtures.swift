import Dispatch
import Foundation
import SDKAuthorizationTesting
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationSignature

// Fixtures the tests across modes share with the signature mode's tests (copied, as test targets
// do not depend on each other): a signature and the signature mode's client.

/// A signature as the app's server would make it: RS256-shaped, `sub` = the user.
func signature(_ user: String, _ serial: Int = 1) -> String {
    makeJWT(["sub": user, "exp": 1_900_000_000 + serial, "aud": "braze"])
}

/// A Braze-style rejection: 401 with `auth_error`.
func authErrorResponse(_ code: Int, user: String? = nil, optional: Bool = false, status: Int = 401) -> ServerResponse {
    let userPart = user.map { #","user_id":"\#($0)""# } ?? ""
    let optionalPart = optional ? #","optional":true"# : ""
    return ServerResponse(statusCode: status, body: Data(#"{"auth_error":{"error_code":\#(code),"reason":"code \#(code)"\#(optionalPart)}\#(userPart)}"#.utf8))
}

/// A client that gives every request to sdk.example.com the signature scheme.
func signatureClient(_ authentication: SignatureAuthentication, transport: RecordingTransport, diagnostics: any DiagnosticsSink = RecordingDiagnosticsSink()) throws -> AuthorizedHTTPClient {
    var policy = AuthorizationPolicy()
    policy.add(try AuthorizationRule(host: "sdk.example.com", path: "/**", scheme: .signature))
    let authorizer = try RequestAuthorizer(policy: policy, providers: [.signature: authentication], diagnostics: diagnostics)
    return AuthorizedHTTPClient(authorizer: authorizer, transport: transport)
}

let dataURL = URL(string: "https://sdk.example.com/api/v3/data")!
