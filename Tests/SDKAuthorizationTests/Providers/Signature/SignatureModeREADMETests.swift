import Foundation
import Testing
@testable import SDKAuthorization

/// The README's signature-mode example, verbatim inside a namespace, so it keeps compiling.
enum SignatureModeREADME {
    static func startSignatureMode(dataURL: URL, fetchSignature: @escaping @Sendable (String) async throws -> String) async throws -> (SignatureRequestQueue, SignatureFailureSubscription) {
        let authentication = try SignatureAuthentication()                    // X-Braze-Auth-Signature
        try authentication.changeUser("user-42", signature: try await fetchSignature("user-42"))
        let subscription = authentication.subscribeToFailures { failure in    // once per rejected signature
            guard !failure.optional, let user = failure.userId else { return }
            Task { try authentication.setSignature(try await fetchSignature(user), for: user) }
        }
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(host: dataURL.host ?? "", path: "/api/**", scheme: .signature))
        let client = AuthorizedHTTPClient(authorizer: try RequestAuthorizer(policy: policy, providers: [.signature: authentication]))
        let queue = try SignatureRequestQueue(authentication: authentication, client: client)   // on disk, retried with backoff
        try await queue.enqueue(OutgoingRequest(method: "POST", url: dataURL, body: Data(#"{"user_id":"user-42","events":[]}"#.utf8)))
        return (queue, subscription)
    }
}

@Suite("README signature-mode example")
struct SignatureModeREADMETests {
    @Test func signatureModeExampleInTheREADMEIsTheCodeCompiledHere() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        func lines(_ text: some StringProtocol) -> [String] {
            text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty && !$0.hasPrefix("import ") }
        }
        let section = try #require(readme.components(separatedBy: "## Signature mode (Braze style)").dropFirst().first?.components(separatedBy: "\n## ").first)
        let blocks = section.components(separatedBy: "```swift\n").dropFirst().compactMap { $0.components(separatedBy: "```").first }
        #expect(blocks.count == 1)
        let compiled = lines(source).joined(separator: "\n")
        for block in blocks {
            let namespaced = block.split(separator: "\n").map { $0.hasPrefix("func ") ? "static " + $0 : String($0) }.joined(separator: "\n")
            #expect(compiled.contains(lines(namespaced).joined(separator: "\n")), "README block differs from the compiled copy:\n\(block)")
        }
    }
}
