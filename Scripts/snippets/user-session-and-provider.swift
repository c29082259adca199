// A block that continues the core's first example: its AccessTokenProvider and the app's session.
import Foundation
import SDKAuthorization

struct AccessTokenProvider: AuthorizationProvider {
    let accessToken: @Sendable () async throws -> String
    func credential(for context: AuthorizationContext) async throws -> Credential {
        .bearer(try await accessToken())
    }
}

final class UserSession: Sendable {
    func currentJWT() async throws -> String { "jwt" }
}

let session = UserSession()
