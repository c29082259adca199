import Foundation
import SDKAuthorization

/// The Exponea-compatible provider shape: a class with a required `init()` that returns the
/// customer token synchronously.
///
/// ```swift
/// final class ExampleAuthProvider: NSObject, AuthorizationProviderType {
///     required override init() {}
///     func getAuthorizationToken() -> String? { TokenStore.shared.currentJWT }
/// }
///
/// registry.register(ExampleAuthProvider.self, as: "ExponeaAuthProvider")
/// ```
///
/// The framework creates the provider with `init()` and wraps it in a ``CustomerTokenProvider``.
///
/// # Implementation requirements
/// `getAuthorizationToken()` may block (for example on a semaphore while an HTTP call fetches a
/// token): it is never called on Swift's cooperative thread pool. Calls to one provider instance
/// are serialized on its own queue, so an unsynchronized cache in the provider is safe. Return
/// `nil` when no token can be had; that request then fails locally and is not sent.
public protocol AuthorizationProviderType: AnyObject {
    /// Creates the provider; the framework calls it when the configuration is loaded and after
    /// every identity change.
    init()

    /// The customer token (a JWT) for the next request, or `nil` when none can be had.
    func getAuthorizationToken() -> String?
}
