import Foundation
import SDKAuthorization
import Testing
import TestSupport

@Suite("Errors say what happened and name the request", .hangLimit)
struct RequestErrorWordingTests {
    let unauthorized: @Sendable (OutgoingRequest) async throws -> ServerResponse = { _ in ServerResponse(statusCode: 401, body: Data()) }

    @Test func aRejectionOfARequestNoRuleMatchesSaysNoCredentialWasSentAndNamesTheRequest() async throws {
        let authorizer = try RequestAuthorizer(host: "api.example.com") { "token-1" }
        let request = OutgoingRequest(method: "GET", url: URL(string: "https://user:pw@other.example.com/v1/me?api_key=SECRET")!)
        do {
            _ = try await authorizer.send(request, through: unauthorized)
            Issue.record("no error")
        } catch {
            #expect(error.code == .authorizationRejected)
            #expect(error.statusCode == 401)
            #expect(error.description == "The server answered HTTP 401 to GET https://other.example.com/v1/me?…, and no credential was sent: no endpoint or rule of the policy gives it a scheme")
            #expect(!error.description.contains("SECRET") && !error.description.contains("pw"))
        }
    }

    @Test func aRejectedCredentialNamesTheRequestAsMethodAndURLWithoutItsQueryValues() async throws {
        let authorizer = try RequestAuthorizer(host: "api.example.com") { "token-1" }
        let request = OutgoingRequest(method: "POST", url: URL(string: "https://api.example.com/v1/items?api_key=SECRET")!)
        do {
            _ = try await authorizer.send(request, through: unauthorized)
            Issue.record("no error")
        } catch {
            #expect(error.description == "The server rejected the bearer credential of POST https://api.example.com/v1/items?… with HTTP 401")
        }
    }

    @Test func anErrorMadeOutsideTheLoopSaysTheRequest() {
        let error = RequestError.authorizationRejected(status: 403, scheme: .bearer, body: Data())
        #expect(error.description == "The server rejected the bearer credential of the request with HTTP 403")
        #expect(error.statusCode == 403)
    }

    @Test func theTypedErrorIsCaughtWithoutACast() async throws {
        // `send` throws `RequestError` (typed throws): `catch` binds it as such, with no `as` cast to warn about.
        let authorizer = try RequestAuthorizer(host: "api.example.com") { "token-1" }
        let request = OutgoingRequest(method: "GET", url: URL(string: "https://api.example.com/v1/me")!)
        var caught: RequestError.Code?
        do {
            _ = try await authorizer.send(request, through: unauthorized)
        } catch where error.code == .authorizationRejected {
            caught = error.code
        } catch {
            caught = error.code
        }
        #expect(caught == .authorizationRejected)
    }
}
