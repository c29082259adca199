// What the prose around a "your own stack" block names: an authorizer, a request, the SDK's own
// stack, a URLSession, the shared client and two URLs. A second file of the block's module.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import SDKAuthorization

struct MyStack: Sendable {
    func send(_ request: OutgoingRequest) async throws -> ServerResponse { ServerResponse(statusCode: 200) }
}

let myStack = MyStack()
let authorizer = try! RequestAuthorizer(host: "api.example.com", bearerToken: { "token" })
let request = OutgoingRequest(method: "GET", url: URL(string: "https://api.example.com/v1/inbox")!)
let inboxURL = URL(string: "https://api.example.com/v1/inbox")!
let mediaURL = URL(string: "https://api.example.com/v1/media")!
let session = URLSession.shared
let client = AuthorizedHTTPClient(authorizer: authorizer)
