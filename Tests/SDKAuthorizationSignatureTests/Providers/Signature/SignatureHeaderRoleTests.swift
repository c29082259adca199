import Foundation
import SDKAuthorizationTesting
import Testing
import TestSupport
@testable import SDKAuthorization
@testable import SDKAuthorizationModeKit
@testable import SDKAuthorizationSignature

/// A credential, the signature and the idempotency key each have a header of their own.
@Suite("Signature mode: header roles are exclusive", .hangLimit)
struct SignatureHeaderRoleTests {
    func queueRefusal(_ idempotencyHeaderName: String, signatureHeader: String = SignatureAuthentication.defaultHeaderName,
                      tokenHeader: String? = nil) throws -> SignatureQueueError? {
        let authentication = try SignatureAuthentication(headerName: signatureHeader)
        var policy = AuthorizationPolicy()
        policy.add(try AuthorizationRule(host: "sdk.example.com", path: "/**", scheme: .signature))
        var providers: [AuthorizationScheme: any AuthorizationProvider] = [.signature: authentication]
        if let tokenHeader {
            policy.add(try AuthorizationRule(host: "api.example.com", path: "/**", scheme: .bearer))
            providers[.bearer] = try RefreshingTokenProvider(options: .init(headerName: tokenHeader)) { .init("t") }
        }
        let client = AuthorizedHTTPClient(authorizer: try RequestAuthorizer(policy: policy, providers: providers), transport: RecordingTransport(statusCode: 201))
        let directory = temporaryQueueDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            let queue = try SignatureRequestQueue(name: "roles", directory: directory, authentication: authentication, client: client,
                                                  options: .init(idempotencyHeaderName: idempotencyHeaderName), clock: ManualClock())
            Task { await queue.close() }
            return nil
        } catch {
            return error
        }
    }

    @Test func theIdempotencyHeaderIsNeverAuthorizationInAnyCase() throws {
        for name in ["Authorization", "authorization", "AUTHORIZATION"] {
            let error = try #require(try queueRefusal(name), "\(name)")
            #expect(error.code == .invalidConfiguration && error.message.contains("idempotencyHeaderName"), "\(name)")
        }
    }

    @Test func theIdempotencyHeaderIsNeverTheSignaturesHeader() throws {
        for name in ["X-Braze-Auth-Signature", "x-braze-auth-signature"] {
            let error = try #require(try queueRefusal(name), "\(name)")
            #expect(error.code == .invalidConfiguration && error.message.contains("idempotencyHeaderName"), "\(name)")
        }
        let custom = try #require(try queueRefusal("x-user-sig", signatureHeader: "X-User-Sig"))
        #expect(custom.message.contains("idempotencyHeaderName"))
    }

    @Test func theIdempotencyHeaderIsNeverTheHeaderOfAnotherCredentialOfTheClient() throws {
        let error = try #require(try queueRefusal("X-Session-Token", tokenHeader: "x-session-token"))
        #expect(error.code == .invalidConfiguration && error.message.contains("idempotencyHeaderName"))
        #expect(try queueRefusal("Idempotency-Key", tokenHeader: "X-Session-Token") == nil, "distinct headers are accepted")
    }

    @Test func aSignatureIsNeverSentUnderTheIdempotencyHeader() {
        for name in ["Idempotency-Key", "idempotency-key"] {
            #expect(throws: ConfigurationError.self) { try SignatureAuthentication(headerName: name) }
            do {
                _ = try SignatureAuthentication(headerName: name)
            } catch {
                #expect(error.code == .invalidValue && error.key == "headerName")
            }
        }
    }

    @Test func aTokenIsNeverSentUnderTheIdempotencyHeader() {
        for name in ["Idempotency-Key", "IDEMPOTENCY-KEY"] {
            do {
                _ = try RefreshingTokenProvider(options: .init(headerName: name)) { .init("t") }
                Issue.record("\(name) was accepted as a token's header")
            } catch {
                #expect(error.code == .invalidValue && error.key == "headerName")
            }
        }
    }
}
