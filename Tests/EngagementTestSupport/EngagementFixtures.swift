import Foundation
import SDKAuthorization
import SDKAuthorizationEngagement

// Fixtures of the Engagement mode's tests, shared by the tests across modes: a configuration, a
// registry with a scripted provider, and Exponea-shaped provider classes.

public func engagementConfiguration(
    authorization: String? = "Token api-key-1",
    advancedAuthEnabled: Bool = false,
    providerLookup: ProviderLookup = .default,
    caching: CustomerTokenCaching = .disabled
) throws -> AuthorizationConfiguration {
    try AuthorizationConfiguration(
        projectToken: "project-1",
        baseURL: "https://api.example.com",
        authorization: authorization,
        advancedAuthEnabled: advancedAuthEnabled,
        providerLookup: providerLookup,
        customerTokenCaching: caching
    )
}

/// A registry whose `ExponeaAuthProvider` is a native scripted provider.
public func registry(with provider: any AuthorizationProvider, name: String = ProviderLookup.defaultImplicitName) -> ProviderRegistry {
    let registry = ProviderRegistry()
    registry.register(name: name) { _ in provider }
    return registry
}

// Exponea-shaped provider classes used by the registry and client tests.

public final class ExampleAuthProvider: NSObject, AuthorizationProviderType {
    public static let token = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1MSJ9.c2ln"
    public required override init() {}
    public func getAuthorizationToken() -> String? { Self.token }
}

public final class NilReturningAuthProvider: NSObject, AuthorizationProviderType {
    public required override init() {}
    public func getAuthorizationToken() -> String? { nil }
}

public final class EmptyReturningAuthProvider: NSObject, AuthorizationProviderType {
    public required override init() {}
    public func getAuthorizationToken() -> String? { "" }
}

public final class InjectingAuthProvider: NSObject, AuthorizationProviderType {
    public required override init() {}
    public func getAuthorizationToken() -> String? { "abc\r\nX-Injected: yes" }
}

/// Conforms but is not an NSObject subclass (fails the iOS convention, passes the Android one).
public final class PlainSwiftAuthProvider: AuthorizationProviderType {
    public required init() {}
    public func getAuthorizationToken() -> String? { "plain.swift.token" }
}

/// An NSObject subclass that does not conform.
public final class NotAnAuthProvider: NSObject {}

