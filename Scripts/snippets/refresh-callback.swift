// What the prose around a refresh block names: the app's auth service, whose refresh returns the
// new access token.
import SDKAuthorization

struct AuthService: Sendable {
    func refreshAccessToken() async throws -> RefreshingTokenProvider.Token { .init("new-token") }
}

let auth = AuthService()
