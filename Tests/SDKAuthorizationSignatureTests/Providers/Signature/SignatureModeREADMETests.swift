import Foundation
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationModeKit
@testable import SDKAuthorizationSignature

/// The signature-mode example of the SDKAuthorizationSignature catalogue, verbatim inside a namespace, so it keeps compiling.
enum SignatureModeREADME {
    static func startSignatureMode(dataURL: URL, fetchSignature: @escaping @Sendable (String) async throws -> String) async throws -> (SignatureRequestQueue, SignatureFailureSubscription) {
        let authentication = try SignatureAuthentication()                    // X-Braze-Auth-Signature
        try authentication.changeUser("user-42", signature: try await fetchSignature("user-42"))
        let subscription = authentication.subscribeToFailures { failure in    // once per rejected signature
            guard !failure.optional, let user = failure.userId else { return }
            Task { try authentication.setSignature(try await fetchSignature(user), for: user) }
        }
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(origin: dataURL, path: "/api/**", scheme: .signature))   // dataURL's scheme, host and port
        let client = AuthorizedHTTPClient(authorizer: try RequestAuthorizer(policy: policy, providers: [.signature: authentication]))
        let directory = SignatureRequestQueue.defaultDirectory(for: try CredentialNamespace("com.example.sdk"))   // your SDK's own
        let queue = try SignatureRequestQueue(directory: directory, authentication: authentication, client: client)   // on disk, retried with backoff
        try await queue.enqueue(OutgoingRequest(method: "POST", url: dataURL, body: Data(#"{"user_id":"user-42","events":[]}"#.utf8)))
        return (queue, subscription)
    }
}

@Suite("README signature-mode example", .hangLimit)
struct SignatureModeREADMETests {
    @Test func signatureModeExampleInTheREADMEIsTheCodeCompiledHere() throws {
        #expect(try readmeBlocksMatchCompiledCopy(heading: "## Signature mode (Braze style)", in: "Sources/SDKAuthorizationSignature/SDKAuthorizationSignature.docc/SDKAuthorizationSignature.md", source: #filePath) == 1)
    }
}
