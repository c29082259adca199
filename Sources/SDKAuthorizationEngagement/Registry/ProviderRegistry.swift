import Foundation
import SDKAuthorization
import SDKAuthorizationModeKit

extension ProviderFactoryContext {
    /// The Engagement configuration being loaded, when the context comes from a ``ProviderRegistry``
    /// (every context the framework makes does).
    public var configuration: AuthorizationConfiguration? { loadedConfiguration as? AuthorizationConfiguration }
}

/// Finds authorization providers by name, as the vendor SDKs find their provider class by name.
///
/// A name resolves, in order, to:
/// 1. a mode registered with ``register(_:)`` (the built-in modes too: a
///    registry finds only the modes registered with it), or a native provider factory registered
///    with ``register(name:factory:)``;
/// 2. a class registered in code with ``register(_:as:)``, the stand-in for
///    `@objc(ExponeaAuthProvider)`;
/// 3. a real run-time lookup of a module-qualified type name: `NSClassFromString`, then the Swift
///    runtime, which also finds nested and generic types and structs on every platform
///    (`MyApp.Providers.Example`, `MyApp.Provider<Swift.Int>`).
///
/// A class found by 2 or 3 is checked (an `NSObject` subclass under the iOS convention, then
/// conformance to ``AuthorizationProviderType``) and wrapped in a ``CustomerTokenProvider``
/// (behind a `CachingAuthorizationProvider` when the configuration opts into caching). Such a
/// class is instantiated again after every identity change, as the vendor SDKs do; a native
/// provider is kept and told through `AuthorizationProvider.identityDidChange()`.
///
/// The built-in modes are registered as any mode is, with the collaborators they need:
///
/// ```swift
/// registry.register(SignatureMode())
/// registry.register(TokenExchangeMode(signer: .async { payload in try await server.sign(payload) }))
/// ```
///
/// A configuration file read with ``AuthorizationConfiguration/init(contentsOf:registry:)`` may
/// hold exactly the keys of the modes registered here, besides the Engagement keys.
/// Failures are `ConfigurationError` values carrying the vendors' documented messages; when the name
/// is a built-in one whose product the app does not link, or close to a built-in one, a hint follows
/// in parentheses (``BuiltInProviderName/hint(forUnresolvedName:)``).
///
/// ```swift
/// let registry = ProviderRegistry()
/// registry.register(ExampleAuthProvider.self, as: "ExponeaAuthProvider")
/// ```
public final class ProviderRegistry: Sendable {
    /// A native provider factory.
    public typealias Factory = @Sendable (ProviderFactoryContext) throws -> any AuthorizationProvider

    private enum Entry {
        case factory(Factory)
        case mode(any NamedProviderFactory)
        /// A mode known by its keys only (the doctor's stand-in for a mode it cannot load).
        case keyedFactory([ModeSettingKey], Factory)
        case providerType(Any.Type)

        /// What was registered, in words, for an error naming two registrations.
        var kind: String {
            switch self {
            case .factory: "a provider factory"
            case .mode(let mode): "the mode \(String(reflecting: type(of: mode)))"
            case .keyedFactory: "a described mode"
            case .providerType(let type): "the class \(String(reflecting: type))"
            }
        }

        /// The keys of a mode; nil for a provider that is not one.
        var settingKeys: [ModeSettingKey]? {
            switch self {
            case .mode(let mode): type(of: mode).settingKeys
            case .keyedFactory(let keys, _): keys
            case .factory, .providerType: nil
            }
        }
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var lookups = 0
        /// The first registration refused: the registry refuses every configuration with it
        /// (``checkRegistrations()``), so a refused registration is never silently lost.
        var refusal: ConfigurationError?

        /// Adds `entry` under `name`, unless the name is taken or the mode's keys are refused.
        mutating func add(_ entry: Entry, as name: String) {
            if let earlier = entries[name] {
                refusal = refusal ?? .nameRegisteredTwice(name, first: earlier.kind, second: entry.kind)
                return
            }
            if let keys = entry.settingKeys, let reason = Self.refusal(ofKeys: keys) {
                refusal = refusal ?? .modeRefused(name, reason: reason)
                return
            }
            entries[name] = entry
        }

        /// Why a mode's keys cannot be registered, or nil: a key, or the first part of a vendor
        /// spelling, may not be an Engagement key of every configuration file (a partner mode's
        /// switch spelt `advancedAuthEnabled` would choose the mode for a plain Exponea file).
        static func refusal(ofKeys keys: [ModeSettingKey]) -> String? {
            for key in keys {
                if let problem = declarationProblem(of: key) {
                    return "its key \(LogText.doubleQuoted(key.name, limit: 64)) \(problem)"
                }
                if AuthorizationConfiguration.fileKeys.contains(key.name) {
                    return "its key \(LogText.doubleQuoted(key.name, limit: 64)) is an Engagement key of every configuration file; a mode cannot own it"
                }
                for spelling in key.vendorSpellings {
                    guard let head = spelling.path.first, AuthorizationConfiguration.fileKeys.contains(head) else { continue }
                    return "its key \(LogText.doubleQuoted(key.name, limit: 64)) has the vendor spelling \(LogText.doubleQuoted(spelling.dottedPath, limit: 128)) (\(LogText.escaped(spelling.vendor, limit: 64))), which is an Engagement key of every configuration file; a vendor spelling cannot be another product's key"
                }
            }
            return nil
        }

        /// Why a mode cannot declare `key`, or nil: a range on a key that is not a number, a range
        /// with a bound that is not finite, a default of another type, not finite or outside the range.
        static func declarationProblem(of key: ModeSettingKey) -> String? {
            if let range = key.range {
                guard key.type == .number || key.type == .integer else {
                    return "declares a range, which only a number or integer key can have"
                }
                guard range.lowerBound.isFinite, range.upperBound.isFinite else { return "declares a range whose bounds are not finite" }
            }
            guard let value = key.defaultValue else { return nil }
            let number: Double?
            switch (key.type, value) {
            case (.bool, .bool), (.string, .string), (.url, .url): number = nil
            case (.number, .number(let found)): number = found
            case (.integer, .integer(let found)): number = Double(found)
            default: return "has a default that is not \(key.type.expected)"
            }
            // As a value from a file or from code, which is refused when it is not finite.
            if let number, !number.isFinite { return "has a default that is not a finite number" }
            if let number, let range = key.range, !range.contains(number) {
                return "has a default outside its range; expected \(key.expected)"
            }
            return nil
        }
    }

    private let state = Locked(State())
    private let typeLookup: @Sendable (String) -> Any.Type?

    /// An empty registry: it finds the modes and providers registered with it, and classes by
    /// their module-qualified names.
    public convenience init() {
        self.init(typeLookup: { name in NSClassFromString(name) ?? SwiftTypeLookup.type(named: name) })
    }

    init(typeLookup: @escaping @Sendable (String) -> Any.Type?) {
        self.typeLookup = typeLookup
    }

    /// Registers a class under `name`, like `@objc(ExponeaAuthProvider)` on Apple platforms.
    ///
    /// Any class may be registered; whether it is a usable provider is checked when a configuration
    /// resolves it, with the documented messages. A name is registered once: a second registration
    /// under it is refused (see ``register(_:)``).
    public func register(_ providerClass: AnyClass, as name: String) {
        state.withLock { $0.add(.providerType(providerClass), as: name) }
    }

    /// Registers `mode` under its `providerName` (a core `NamedProviderFactory`); a configuration that
    /// chooses the name gets the provider the mode makes, and a configuration file read with this
    /// registry may hold the mode's `settingKeys`. Two modes may own keys of the same name: a file
    /// gives the key to the mode it chooses.
    ///
    /// A registration is refused, and from then on every configuration this registry reads or
    /// starts fails with that refusal (`ConfigurationError.Code.invalidRegistration`), when:
    /// - the name is registered already (by any `register` method): the first registration is kept,
    ///   never replaced without a word; ``unregister(_:)`` it first to replace it;
    /// - a key of the mode, or the first part of one of its vendor spellings, is an Engagement key
    ///   of every file (``AuthorizationConfiguration/fileKeys``: `advancedAuthEnabled`, say), which
    ///   would let the mode take over a plain Exponea configuration.
    public func register(_ mode: some NamedProviderFactory) {
        let name = type(of: mode).providerName
        state.withLock { $0.add(.mode(mode), as: name) }
    }

    /// Registers `mode` under `name` instead of its own name, with its keys: how the build-time
    /// registration (`sdkauth-providers.json`) registers a mode under the manifest's name. Refused
    /// as ``register(_:)`` says.
    public func register(_ mode: some NamedProviderFactory, under name: String) {
        state.withLock { $0.add(.mode(mode), as: name) }
    }

    /// Every configuration key of the modes registered here, each with the name of its mode.
    public var modeSettingKeys: [(providerName: String, key: ModeSettingKey)] {
        state.withLock { state in
            state.entries.sorted { $0.key < $1.key }.flatMap { (name, entry) -> [(providerName: String, key: ModeSettingKey)] in
                switch entry {
                case .mode(let mode): return type(of: mode).settingKeys.map { (name, $0) }
                case .keyedFactory(let keys, _): return keys.map { (name, $0) }
                case .factory, .providerType: return []
                }
            }
        }
    }

    /// Registers `factory` under `name` as a mode whose keys are `settingKeys`: a file read with this
    /// registry may hold them, and the settings are checked against them before `factory` runs, as
    /// for a mode registered with ``register(_:)``. How the authorization doctor registers a mode it
    /// knows only from its description (`sdkauth-mode.json`), under a name read at run time.
    package func register(name: String, settingKeys: [ModeSettingKey], factory: @escaping Factory) {
        state.withLock { $0.add(.keyedFactory(settingKeys, factory), as: name) }
    }

    /// Registers a native provider factory under `name`; it runs each time a client loads it. It
    /// owns no configuration key: a mode that has some is registered with ``register(_:)``. A name
    /// is registered once: a second registration under it is refused (see ``register(_:)``).
    public func register(name: String, factory: @escaping Factory) {
        state.withLock { $0.add(.factory(factory), as: name) }
    }

    /// Registers one native provider instance under `name`; every client that loads the name shares it.
    public func register(name: String, provider: any AuthorizationProvider) {
        register(name: name) { _ in provider }
    }

    /// Removes whatever is registered under `name`.
    public func unregister(_ name: String) {
        state.withLock { $0.entries[name] = nil }
    }

    /// How many times a provider has been looked up (for tests of "never looked up").
    var lookupCount: Int { state.withLock { $0.lookups } }

    /// Throws the first registration this registry refused: a name registered twice, or a mode
    /// whose keys it refused. Every file read with the registry and every client started from it
    /// checks this first.
    func checkRegistrations() throws(ConfigurationError) {
        if let refusal = state.withLock({ $0.refusal }) { throw refusal }
    }

    /// Whether `name` resolves: registered here, or a type the run-time lookup finds.
    func resolves(_ name: String) -> Bool { find(name) != nil }

    /// Whether `name` is registered here (not looked up at run time).
    package func isRegistered(_ name: String) -> Bool {
        state.withLock { $0.entries[name] != nil }
    }

    /// Resolves the customer-token provider of `configuration`.
    ///
    /// - Throws: `ConfigurationError` with the documented message of the convention in use.
    func resolveProvider(for configuration: AuthorizationConfiguration, context: ProviderFactoryContext) throws(ConfigurationError) -> ResolvedProvider {
        state.withLock { $0.lookups += 1 }
        try checkRegistrations()
        switch configuration.providerLookup {
        case .implicitName(let name):
            switch find(name) {
            case nil:
                throw ConfigurationError.advancedAuthEnabledWithoutProvider.hinted(forUnresolved: name, registered: registeredNames,
                                                                                   modeSettings: configuration.modeSettings)
            case .factory(let factory)?:
                return try make(factory, name: name, context: context.checkingNoModeSettings(for: name))
            case .mode(let mode)?:
                return try make(mode, name: name, context: context)
            case .keyedFactory(let keys, let factory)?:
                return try make(factory, keys: keys, name: name, context: context)
            case .providerType(let found)?:
                try context.checkingNoModeSettings(for: name)
                guard found is NSObject.Type else { throw .providerIsNotNSObject(name: name) }
                guard let providerType = found as? any AuthorizationProviderType.Type else {
                    throw .providerDoesNotConform(name: name)
                }
                return wrap(providerType, caching: configuration.customerTokenCaching, context: context)
            }
        case .registeredClassName(nil):
            throw .advancedAuthEnabledButProviderNotNamed
        case .registeredClassName(let name?):
            switch find(name) {
            case nil:
                throw ConfigurationError.registeredClassNotFound(name: name).hinted(forUnresolved: name, registered: registeredNames,
                                                                                    modeSettings: configuration.modeSettings)
            case .factory(let factory)?:
                return try make(factory, name: name, context: context.checkingNoModeSettings(for: name))
            case .mode(let mode)?:
                return try make(mode, name: name, context: context)
            case .keyedFactory(let keys, let factory)?:
                return try make(factory, keys: keys, name: name, context: context)
            case .providerType(let found)?:
                try context.checkingNoModeSettings(for: name)
                guard let providerType = found as? any AuthorizationProviderType.Type else {
                    throw .registeredClassDoesNotImplement(name: name)
                }
                return wrap(providerType, caching: configuration.customerTokenCaching, context: context)
            }
        }
    }

    /// Every name registered here, and the module-qualified name of every class registered: the
    /// names a misspelt `providerName` may mean.
    private var registeredNames: [String] {
        state.withLock { state in
            state.entries.flatMap { name, entry -> [String] in
                guard case .providerType(let type) = entry else { return [name] }
                return [name, String(reflecting: type)]
            }
        }
    }

    private func find(_ name: String) -> Entry? {
        if let entry = state.withLock({ $0.entries[name] }) { return entry }
        guard !name.isEmpty, let found = typeLookup(name) else { return nil }
        return .providerType(found)
    }

    /// The provider `mode` makes, its settings checked against its keys first.
    private func make(_ mode: any NamedProviderFactory, name: String, context: ProviderFactoryContext) throws(ConfigurationError) -> ResolvedProvider {
        try make({ context in try mode.makeProvider(for: context) }, keys: type(of: mode).settingKeys, name: name, context: context)
    }

    /// The provider `factory` makes for a mode whose keys are `keys`, its settings checked against them first.
    private func make(_ factory: Factory, keys: [ModeSettingKey], name: String, context: ProviderFactoryContext) throws(ConfigurationError) -> ResolvedProvider {
        let settings = try context.modeSettings.checked(for: keys, providerName: name)
        let checked = ProviderFactoryContext(baseURL: context.baseURL, configuration: context.loadedConfiguration, clock: context.clock,
                                             diagnostics: context.diagnostics, observer: context.observer, modeSettings: settings,
                                             transport: context.transport)
        return try make(factory, name: name, context: checked)
    }

    private func make(_ factory: Factory, name: String, context: ProviderFactoryContext) throws(ConfigurationError) -> ResolvedProvider {
        do {
            return ResolvedProvider(provider: try factory(context), isClassBased: false)
        } catch let error as ConfigurationError {
            throw error
        } catch {
            throw .providerCreationFailed(name: name, reason: String(describing: error))
        }
    }

    private func wrap(_ type: any AuthorizationProviderType.Type, caching: CustomerTokenCaching,
                      context: ProviderFactoryContext) -> ResolvedProvider {
        let provider = CustomerTokenProvider(type: type, clock: context.clock, diagnostics: context.diagnostics)
        switch caching {
        case .disabled:
            return ResolvedProvider(provider: provider, isClassBased: true)
        case .honoringExpiry(let leeway, let maximumAge):
            let cached = CachingAuthorizationProvider(wrapping: provider, leeway: leeway, maximumAge: maximumAge, clock: context.clock)
            return ResolvedProvider(provider: cached, isClassBased: true)
        }
    }
}

extension ProviderFactoryContext {
    /// This context, when it carries no mode settings: a provider that is not a mode owns no key.
    @discardableResult
    func checkingNoModeSettings(for name: String) throws(ConfigurationError) -> ProviderFactoryContext {
        guard let key = modeSettings.values.keys.sorted().first else { return self }
        throw ConfigurationError.unknownKeys([key]).appendingHint(
            "\(LogText.escaped(key, limit: 64)) is not a setting of \(LogText.typeName(name)), which is not a registered mode")
    }
}

extension ConfigurationError {
    /// A "not found" error with ``BuiltInProviderName/hint(forUnresolvedName:)`` after its documented
    /// message, when there is one: the name is a built-in mode whose product the app does not link,
    /// or close to one.
    func hinted(forUnresolved name: String) -> ConfigurationError {
        BuiltInProviderName.hint(forUnresolvedName: name).map(appendingHint) ?? self
    }

    /// The same, and otherwise "did you mean" a name registered in the registry (a mode or
    /// provider of the app's own) or the module-qualified name of a class registered in it, when
    /// `name` is close to one: the same but for case, or at most two letters off
    /// (``NearestName``, bounded however many names there are).
    /// The authorization doctor gives it the names the app's registry holds as far as it knows them
    /// (its manifest's names and class types), so its message is the app's.
    ///
    /// Otherwise, when the configuration carries `modeSettings` (which only a mode takes), the name
    /// is a mode's the app did not register: the hint names it and says to register it.
    package func hinted(forUnresolved name: String, registered: [String], modeSettings: ModeSettings = ModeSettings()) -> ConfigurationError {
        if let hint = BuiltInProviderName.hint(forUnresolvedName: name) { return appendingHint(hint) }
        var nearest = NearestName(candidates: registered)
        if let meant = nearest.nearest(to: name) {
            return appendingHint("\(LogText.doubleQuoted(name, limit: 80)) is not registered; did you mean \(LogText.doubleQuoted(meant, limit: 80))?")
        }
        guard !modeSettings.values.isEmpty else { return self }
        let keys = modeSettings.values.keys.sorted().map { LogText.escaped($0, limit: 64) }.joined(separator: ", ")
        return appendingHint("\(LogText.doubleQuoted(name, limit: 80)) is not registered, and the configuration gives it the mode \(modeSettings.values.count == 1 ? "setting" : "settings") \(keys): register the mode with the registry (ProviderRegistry.register(_:)) before the client starts")
    }
}

/// A provider the registry resolved, and whether it came from a class (re-created on identity change).
struct ResolvedProvider: Sendable {
    let provider: any AuthorizationProvider
    let isClassBased: Bool
}
