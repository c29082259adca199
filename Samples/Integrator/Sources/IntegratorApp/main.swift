import Foundation
import SDKAuthorization
import SDKAuthorizationEngagement

// An integrator's app: its provider class is named in sdkauth-providers.json, which the
// RegisterAuthorizationProviders plugin turns into `ProviderRegistry.registerManifestProviders()` at
// build time; its configuration file is the one `swift package authorization-doctor` checks.

/// The app's provider, in the Exponea shape: the customer's JWT from wherever the app keeps it.
final class AppAuthProvider: NSObject, AuthorizationProviderType {
    required override init() {}
    func getAuthorizationToken() -> String? { "integrator.customer.jwt" }
}

// The configuration file beside this source (an app would ship it in its bundle).
let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("authorization.json")
let configuration = try AuthorizationConfiguration(contentsOf: file)

let registry = ProviderRegistry()
registry.registerManifestProviders()
print("registered at build time: \(ProviderRegistry.manifestProviderNames.joined(separator: ", "))")

let client = try AuthorizedHTTPClient(configuration: configuration, registry: registry)
guard let provider = client.provider else {
    print("no provider")
    exit(1)
}
let context = AuthorizationContext(endpoint: .appInboxFetch, url: URL(string: "https://api.exponea.com/webxp/projects/integrator-project/appinbox/fetch")!)
let credential = try await provider.credential(for: context)
// The credential's description never shows the token.
print("appInboxFetch -> \(provider) -> \(credential)")
print("token as the app gave it: \(credential.value == "integrator.customer.jwt")")
