// What the prose around a "your login's session" block names: the app's session (its current JWT),
// a URL and a request body.
import Foundation
import SDKAuthorization

final class UserSession: Sendable {
    let token = "jwt"
    func currentJWT() async throws -> String { token }
}

let session = UserSession()
let profileURL = URL(string: "https://api.example.com/v1/profile")!
let body = Data("{}".utf8)
