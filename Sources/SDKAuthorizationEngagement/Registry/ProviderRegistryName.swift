import SDKAuthorizationModeKit

/// The registry of providers by name, `ProviderRegistry` of `SDKAuthorizationModeKit`, under the
/// name an Engagement app has always written with `import SDKAuthorizationEngagement` alone.
///
/// The registry knows no configuration schema; the Engagement mode plugs its own onto it: a file
/// read with ``AuthorizationConfiguration/init(contentsOf:registry:)`` may hold the Engagement keys
/// (``AuthorizationConfiguration/fileKeys``) besides the keys of the modes registered, and a mode
/// may own none of them. A class found by name must be an ``AuthorizationProviderType``; it is
/// wrapped in a ``CustomerTokenProvider`` (behind a `CachingAuthorizationProvider` when the
/// configuration opts into caching) and instantiated again after every identity change, as the
/// vendor SDKs do, while a native provider is kept and told through
/// `AuthorizationProvider.identityDidChange()`. Failures carry the Exponea SDKs' documented
/// messages; when the name is a mode's the registry does not hold but knows of (described with
/// `describe(_:)`, or built in: ``BuiltInProviderName/modes``), or close to a registered or
/// described name, a hint follows in parentheses (`hint(forUnresolvedName:otherNames:otherModes:modeSettings:)`).
///
/// ```swift
/// let registry = ProviderRegistry()
/// registry.register(ExampleAuthProvider.self, as: "ExponeaAuthProvider")
/// ```
public typealias ProviderRegistry = SDKAuthorizationModeKit.ProviderRegistry
