// What the prose around the "a transport of your own" block names: an authorizer and a URL.
import Foundation
import SDKAuthorization

let authorizer = try! RequestAuthorizer(host: "api.example.com", bearerToken: { "token" })
let url = URL(string: "https://api.example.com/v1/inbox")!

struct MyStack: Sendable {
    func send(_ request: OutgoingRequest) async throws -> ServerResponse { ServerResponse(statusCode: 200) }
}

let myStack = MyStack()
