// What the prose around an Engagement block names: the configuration, a token store, a file, the
// app's signing server, and what the RegisterAuthorizationProviders plugin generates from
// sdkauth-providers.json (registerManifestProviders; Scripts/check-registration-plugin builds the
// real one).
import Foundation
import SDKAuthorization
import SDKAuthorizationEngagement
import SDKAuthorizationTokenExchange

let configuration = try! AuthorizationConfiguration(
    projectToken: "YOUR_PROJECT_TOKEN", baseURL: "https://api.exponea.com", authorization: "Token YOUR_API_KEY", advancedAuthEnabled: true
)
let fileURL = URL(fileURLWithPath: "authorization.json")

final class TokenStore: Sendable {
    static let shared = TokenStore()
    var currentJWT: String? { nil }
}

struct SigningServer: Sendable {
    func sign(_ claims: [String: JWTClaimValue]) async throws -> String { "signed" }
}

let myServer = SigningServer()

extension ProviderRegistry {
    /// Stands in for the function the build-tool plugin generates.
    func registerManifestProviders() {}
}
