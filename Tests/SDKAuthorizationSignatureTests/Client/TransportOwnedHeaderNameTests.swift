import Foundation
import SDKAuthorizationTesting
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationSignature
import SDKAuthorizationModeKit

/// Header names a credential, a signature or an idempotency key must never take: the transport owns them.
let transportOwnedHeaderNames = [
    "Host", "content-length", "Transfer-Encoding", "CONNECTION", "Upgrade", "TE", "Trailer", "Keep-Alive",
    "Proxy-Authorization", "Proxy-Authenticate", "Proxy-Connection", "proxy-anything", "Cookie", "Set-Cookie",
    "Content-Type", "Content-Encoding", "Expect", "Date", "Via", ":authority", ":PATH",
]

/// Header names that merely look like transport-owned ones.
let ordinaryHeaderNames = ["X-Braze-Auth-Signature", "X-Idempotency-Token", "X-Api-Key", "Hostname", "Content-Typo", "Proxied", "X-Proxy-Id", "Dates"]

@Suite("Header names the transport owns", .hangLimit)
struct TransportOwnedHeaderNameTests {
    @Test(arguments: transportOwnedHeaderNames)
    func credentialUnderATransportOwnedHeaderNameFailsTheRequestLocally(name: String) async throws {
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(host: "api.example.com", scheme: "custom"))
        let authorizer = try RequestAuthorizer(policy: policy, providers: ["custom": ScriptedProvider(.credential(.header(name, value: "secret")))],
                                               diagnostics: RecordingDiagnosticsSink())
        await #expect(throws: RequestError.invalidCredential(endpoint: nil)) {
            try await authorizer.authorize(OutgoingRequest(method: "GET", url: try #require(URL(string: "https://api.example.com/x"))))
        }
    }

    @Test(arguments: ordinaryHeaderNames)
    func credentialUnderAnOrdinaryHeaderNameIsSent(name: String) async throws {
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(host: "api.example.com", scheme: "custom"))
        let authorizer = try RequestAuthorizer(policy: policy, providers: ["custom": ScriptedProvider(.credential(.header(name, value: "secret")))],
                                               diagnostics: RecordingDiagnosticsSink())
        let authorized = try await authorizer.authorize(OutgoingRequest(method: "GET", url: try #require(URL(string: "https://api.example.com/x"))))
        #expect(authorized.request.value(forHeader: name) == "secret")
    }

    @Test(arguments: transportOwnedHeaderNames)
    func signatureHeaderNameThatTheTransportOwnsIsRefused(name: String) {
        #expect {
            try SignatureAuthentication(headerName: name, diagnostics: RecordingDiagnosticsSink())
        } throws: { error in
            guard let error = error as? ConfigurationError, error.code == .invalidValue, error.key == "headerName" else { return false }
            return true
        }
    }

    @Test(arguments: ordinaryHeaderNames.filter { $0 != "Idempotency-Key" })
    func signatureHeaderNameThatIsOrdinaryIsAccepted(name: String) throws {
        #expect(try SignatureAuthentication(headerName: name, diagnostics: RecordingDiagnosticsSink()).headerName == name)
    }

    @Test(arguments: transportOwnedHeaderNames)
    func idempotencyHeaderNameThatTheTransportOwnsIsRefused(name: String) throws {
        let fixture = try QueueFixture()
        #expect(throws: SignatureQueueError.self) { try fixture.queue(.init(idempotencyHeaderName: name)) }
    }

    @Test func idempotencyHeaderNameThatIsOrdinaryIsAccepted() throws {
        let fixture = try QueueFixture()
        #expect(throws: Never.self) { try fixture.queue(.init(idempotencyHeaderName: "X-Request-Key")) }
    }

    @Test(arguments: transportOwnedHeaderNames)
    func theOneCheckNamesEveryTransportOwnedHeader(name: String) {
        #expect(HeaderFieldRules.isTransportOwnedName(name))
    }

    @Test(arguments: ordinaryHeaderNames + ["Authorization", "", "X"])
    func theOneCheckLeavesOrdinaryNamesAlone(name: String) {
        #expect(!HeaderFieldRules.isTransportOwnedName(name))
    }

    @Test func headerNamesMatchWhateverTheCaseOfTheirASCIILettersButWithoutUnicodeFolding() {
        var request = OutgoingRequest(method: "GET", url: URL(string: "https://api.example.com/")!, headers: ["x-api-KEY": "secret"])
        #expect(request.value(forHeader: "X-Api-Key") == "secret")
        // U+212A KELVIN SIGN folds to "k" in Unicode, but is not the ASCII letter a name is made of.
        #expect(request.value(forHeader: "X-Api-\u{212A}ey") == nil)
        let removedKelvin = request.removeHeader("X-API-\u{212A}EY")
        #expect(!removedKelvin)
        let removed = request.removeHeader("X-API-KEY")
        #expect(removed)
        #expect(request.headers.isEmpty)
        let response = ServerResponse(statusCode: 401, headers: ["www-authenticate": "Bearer"])
        #expect(response.value(forHeader: "WWW-Authenticate") == "Bearer")
        #expect(!HeaderFieldRules.sameName("Host", "Hos"))
        #expect(HeaderFieldRules.isTransportOwnedName("TRANSFER-encoding"))
    }
}
