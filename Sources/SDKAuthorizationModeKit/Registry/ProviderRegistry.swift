import Foundation
import SDKAuthorization

/// Finds authorization providers by name, as the vendor SDKs find their provider class by name.
///
/// A name resolves (``resolve(_:context:)``), in order, to:
/// 1. a mode registered with ``register(_:)`` (the built-in modes too: a
///    registry finds only the modes registered with it), or a native provider factory registered
///    with ``register(name:factory:)``: the registry makes its provider;
/// 2. a class registered in code with ``register(_:as:)``, the stand-in for an `@objc(Name)` class name;
/// 3. a real run-time lookup of a module-qualified type name: `NSClassFromString`, then the Swift
///    runtime, which also finds nested and generic types and structs on every platform
///    (`MyApp.Providers.Example`, `MyApp.Provider<Swift.Int>`).
///
/// A type found by 2 or 3 is given to the configuration schema that reads with the registry, which
/// says what the type must be and makes its provider (a vendor mode checks it is its own provider
/// protocol's class and wraps it). The registry knows no configuration schema and no vendor.
///
/// The built-in modes are registered as any mode is, with the collaborators they need:
///
/// ```swift
/// registry.register(SignatureMode())
/// registry.register(TokenExchangeMode(signer: .async { payload in try await server.sign(payload) }))
/// ```
///
/// A configuration file read with this registry may hold exactly the keys of the modes registered
/// here (``modeSettingKeys``), besides its schema's own keys. A name is registered once; a
/// registration refused is never lost (``checkRegistrations()``).
///
/// ```swift
/// let registry = ProviderRegistry()
/// registry.register(PartnerAuthProvider.self, as: "PartnerAuthProvider")
/// ```
public final class ProviderRegistry: Sendable {
    /// A native provider factory.
    public typealias Factory = @Sendable (ProviderFactoryContext) throws -> any AuthorizationProvider

    /// What a name resolves to (``resolve(_:context:)``).
    public enum Resolution {
        /// The provider that the mode or factory registered under the name made, the context's
        /// mode settings checked against the mode's keys first.
        case provider(any AuthorizationProvider)
        /// A type registered under the name with ``register(_:as:)``, or found by its
        /// module-qualified name at run time. What it must be, and the provider made of it, are
        /// the configuration schema's to say.
        case type(Any.Type)
    }

    private enum Entry {
        case factory(Factory)
        case mode(any NamedProviderFactory)
        /// A mode known by its keys only (``register(name:settingKeys:factory:)``).
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
        /// The modes described (``describe(_:)``), by name.
        var descriptions: [String: ModeDescription] = [:]
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
            if let keys = entry.settingKeys, let key = keys.first(where: { Self.declarationProblem(of: $0) != nil }),
               let problem = Self.declarationProblem(of: key) {
                refusal = refusal ?? .modeRefused(name, reason: "its key \(LogText.doubleQuoted(key.name, limit: 64)) \(problem)")
                return
            }
            entries[name] = entry
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

    // MARK: Registering

    /// Registers a class under `name`, like an `@objc(Name)` class name on Apple platforms.
    ///
    /// Any class may be registered; whether it is a usable provider is checked when a configuration
    /// resolves it, by the configuration's schema. A name is registered once: a second registration
    /// under it is refused (see ``register(_:)``).
    public func register(_ providerClass: AnyClass, as name: String) {
        state.withLock { $0.add(.providerType(providerClass), as: name) }
    }

    /// Registers `mode` under its `providerName`; a configuration that chooses the name gets the
    /// provider the mode makes, and a configuration file read with this registry may hold the
    /// mode's `settingKeys`. Two modes may own keys of the same name: a file gives the key to the
    /// mode it chooses.
    ///
    /// A registration is refused, and from then on every configuration this registry reads or
    /// starts fails with that refusal (``checkRegistrations()``, `ConfigurationError.Code.invalidRegistration`), when:
    /// - the name is registered already (by any `register` method): the first registration is kept,
    ///   never replaced without a word; ``unregister(_:)`` it first to replace it;
    /// - a key of the mode declares a range on a key that is not a number, or a default of another
    ///   type or outside its range.
    ///
    /// A configuration schema refuses, besides, a mode that owns one of its own keys
    /// (``checkModes(reserving:as:)``).
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

    /// Registers `factory` under `name` as a mode whose keys are `settingKeys`, as ``register(_:)``
    /// registers a mode: a file read with this registry may hold the keys, and a configuration's
    /// settings are checked against them before `factory` runs. Refused as ``register(_:)`` says.
    ///
    /// For a mode known by its description only, with a name and keys read at run time: how the
    /// authorization doctor registers a mode from its `sdkauth-mode.json`. An app registers its
    /// modes with ``register(_:)``.
    public func register(name: String, settingKeys: [ModeSettingKey], factory: @escaping Factory) {
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

    /// Tells the registry of a mode it does not hold: the app may not link the mode's product, or
    /// may forget to register it. Nothing resolves under the name until the mode is registered;
    /// meanwhile a configuration that chooses the name hears which product to link and what to
    /// register, a name close to it hears "did you mean", and a file key of the mode names the mode
    /// (``hint(forUnresolvedName:otherNames:otherModes:modeSettings:)``) — the hints the built-in
    /// modes get.
    ///
    /// ```swift
    /// registry.describe(ModeDescription(providerName: "PartnerSDK.PartnerToken", product: "PartnerMode",
    ///                                   registration: "PartnerTokenMode(session:)"))
    /// ```
    ///
    /// A later description of the same name replaces the earlier one; a mode registered under the
    /// name is used whatever describes it.
    public func describe(_ description: ModeDescription) {
        state.withLock { $0.descriptions[description.providerName] = description }
    }

    /// The modes described with ``describe(_:)``, in the order of their names.
    public var describedModes: [ModeDescription] {
        state.withLock { $0.descriptions.values.sorted { $0.providerName < $1.providerName } }
    }

    /// Removes whatever is registered under `name`.
    public func unregister(_ name: String) {
        state.withLock { $0.entries[name] = nil }
    }

    // MARK: What is registered

    /// Every configuration key of the modes registered here, each with the name of its mode.
    public var modeSettingKeys: [(providerName: String, key: ModeSettingKey)] {
        state.withLock { state in
            state.entries.sorted { $0.key < $1.key }.flatMap { (name, entry) -> [(providerName: String, key: ModeSettingKey)] in
                (entry.settingKeys ?? []).map { (name, $0) }
            }
        }
    }

    /// Whether something is registered under `name` (a run-time lookup is not tried).
    public func isRegistered(_ name: String) -> Bool {
        state.withLock { $0.entries[name] != nil }
    }

    /// Whether `name` resolves: registered here, or a type the run-time lookup finds. Nothing is made.
    public func resolves(_ name: String) -> Bool { find(name) != nil }

    /// Whether `name` is a module-qualified Swift type name that the run-time lookup looks for
    /// (`MyApp.Provider`, `MyApp.Outer.Provider<Swift.Int>`): ASCII identifiers, 2 to 6 parts, at
    /// most 3 generic arguments nested at most 2 deep, at most 256 bytes. The build-time provider
    /// registration accepts exactly these as a manifest's types.
    public static func isTypeName(_ name: String) -> Bool {
        SwiftTypeLookup.isTypeName(name)
    }

    /// How many times a provider has been looked up (for tests of "never looked up").
    var lookupCount: Int { state.withLock { $0.lookups } }

    /// Throws the first registration this registry refused: a name registered twice, or a mode
    /// whose keys it refused. A configuration schema checks this first, before every file it reads
    /// and every client it starts with the registry (``resolve(_:context:)`` does too).
    ///
    /// - Throws: `ConfigurationError` with the code `invalidRegistration`, naming the registration.
    public func checkRegistrations() throws(ConfigurationError) {
        if let refusal = state.withLock({ $0.refusal }) { throw refusal }
    }

    /// Throws when a mode registered here owns one of `reservedKeys`, as one of its keys or as the
    /// first part of one of its vendor spellings: the keys a configuration schema reads itself, which
    /// a mode must not own (a mode's switch spelt as the schema's own switch would choose the mode for
    /// every plain file of that schema). A schema checks it with
    /// ``checkRegistrations()``, before it reads a file or makes a provider.
    ///
    /// - Parameters:
    ///   - reservedKeys: The schema's own keys.
    ///   - description: What such a key is, as the error says it: `a key of every Partner
    ///     configuration file`.
    /// - Throws: `ConfigurationError` with the code `invalidRegistration`, naming the first such mode
    ///   in the order of names and its key.
    public func checkModes(reserving reservedKeys: Set<String>, as description: String) throws(ConfigurationError) {
        for (name, key) in modeSettingKeys {
            if reservedKeys.contains(key.name) {
                throw .modeRefused(name, reason: "its key \(LogText.doubleQuoted(key.name, limit: 64)) is \(description); a mode cannot own it")
            }
            for spelling in key.vendorSpellings {
                guard let head = spelling.path.first, reservedKeys.contains(head) else { continue }
                throw .modeRefused(name, reason: "its key \(LogText.doubleQuoted(key.name, limit: 64)) has the vendor spelling \(LogText.doubleQuoted(spelling.dottedPath, limit: 128)) (\(LogText.escaped(spelling.vendor, limit: 64))), which is \(description); a vendor spelling cannot be another product's key")
            }
        }
    }

    // MARK: Resolving

    /// What `name` resolves to for the configuration `context` describes: the provider of a mode or
    /// factory registered under it, or a type registered or found at run time (see ``Resolution``).
    ///
    /// The registrations are checked first (``checkRegistrations()``). A mode's settings
    /// (`context.modeSettings`) are checked against its keys, defaults filled in, before the mode
    /// makes its provider; settings given to a name that is not a mode are refused.
    ///
    /// - Returns: `nil` when nothing is registered under `name` and the run-time lookup finds no
    ///   type: the schema throws its own "not found" message, with ``hint(forUnresolvedName:otherNames:otherModes:modeSettings:)``.
    /// - Throws: `ConfigurationError`: a refused registration, a setting the mode refuses, or one given
    ///   to a provider that is not a mode; a factory's `ConfigurationError` as it is, any other
    ///   error it throws as `providerCreationFailed`.
    public func resolve(_ name: String, context: ProviderFactoryContext) throws(ConfigurationError) -> Resolution? {
        state.withLock { $0.lookups += 1 }
        try checkRegistrations()
        switch find(name) {
        case nil:
            return nil
        case .factory(let factory)?:
            return .provider(try make(factory, name: name, context: context.checkingNoModeSettings(for: name)))
        case .mode(let mode)?:
            return .provider(try make({ context in try mode.makeProvider(for: context) }, keys: type(of: mode).settingKeys, name: name, context: context))
        case .keyedFactory(let keys, let factory)?:
            return .provider(try make(factory, keys: keys, name: name, context: context))
        case .providerType(let found)?:
            try context.checkingNoModeSettings(for: name)
            return .type(found)
        }
    }

    /// What to add to a "not found" error when nothing resolves under `name`, or `nil`, the same
    /// for every mode, built-in or not:
    /// - when a mode described here (``describe(_:)``) or in `otherModes` has the name: the product
    ///   to link and what to register;
    /// - "did you mean" a name registered here (a mode or provider of the app's own), the
    ///   module-qualified name of a class registered here, a described mode's name, or one of
    ///   `otherNames`, when `name` is close to one: the same but for case, at most two letters off
    ///   (``NearestName``, bounded however many names there are), or a described mode's name
    ///   without its module (`TokenExchange`);
    /// - otherwise, when the configuration gives mode settings (`modeSettings`, which only a mode
    ///   takes), that the name is a mode's the app did not register, and what to do.
    ///
    /// ```
    /// "PartnerSDK.PartnerToken" is a mode in the product PartnerMode: link PartnerMode to the app's target and register PartnerTokenMode(session:) with the registry
    /// "PartnerSDK.PartnerTokn" is not registered; did you mean "PartnerSDK.PartnerToken"?
    /// ```
    ///
    /// The words are the same for a built-in mode and for one of your own.
    ///
    /// - Parameters:
    ///   - name: The name that did not resolve.
    ///   - otherNames: Names registered in the registry the configuration is really read with,
    ///     that this one lacks: a tool that checks an app's configuration without the app's code
    ///     (the authorization doctor) passes the names the app declares.
    ///   - otherModes: Modes described besides those described here: a configuration schema passes
    ///     the modes it knows of (the Engagement schema, the built-in modes).
    ///   - modeSettings: The settings the configuration gives.
    public func hint(forUnresolvedName name: String, otherNames: [String] = [], otherModes: [ModeDescription] = [],
                     modeSettings: ModeSettings = ModeSettings()) -> String? {
        let described = describedModes + otherModes
        let quoted = LogText.doubleQuoted(name, limit: 80)
        if let mode = described.first(where: { $0.providerName == name }) {
            return "\(quoted) is a mode in the product \(mode.shownProduct): \(mode.linkAndRegister)"
        }
        if let meant = Self.nearestDescribed(to: name, in: described) ?? {
            var nearest = NearestName(candidates: registeredNames + described.map(\.providerName) + otherNames)
            return nearest.nearest(to: name)
        }() {
            return "\(quoted) is not registered; did you mean \(LogText.doubleQuoted(meant, limit: 80))?"
        }
        guard !modeSettings.values.isEmpty else { return nil }
        let keys = modeSettings.values.keys.sorted().map { LogText.escaped($0, limit: 64) }.joined(separator: ", ")
        return "\(quoted) is not registered, and the configuration gives it the mode \(modeSettings.values.count == 1 ? "setting" : "settings") \(keys): register the mode with the registry (ProviderRegistry.register(_:)) before the client starts"
    }

    /// The described mode whose name is `name` but for case, or whose name's last part it is
    /// (`TokenExchange` for `SDKAuthorization.TokenExchange`), if any.
    private static func nearestDescribed(to name: String, in modes: [ModeDescription]) -> String? {
        guard name.utf8.count <= 256 else { return nil }
        let lowered = name.lowercased()
        return modes.map(\.providerName).sorted().first { candidate in
            let candidateLowered = candidate.lowercased()
            return candidate != name && (candidateLowered == lowered || candidateLowered.split(separator: ".").last.map(String.init) == lowered)
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

    /// The provider `factory` makes for a mode whose keys are `keys`, its settings checked against them first.
    private func make(_ factory: Factory, keys: [ModeSettingKey], name: String, context: ProviderFactoryContext) throws(ConfigurationError) -> any AuthorizationProvider {
        let settings = try context.modeSettings.checked(for: keys, providerName: name)
        let checked = ProviderFactoryContext(baseURL: context.baseURL, configuration: context.loadedConfiguration, clock: context.clock,
                                             diagnostics: context.diagnostics, observer: context.observer, modeSettings: settings,
                                             transport: context.transport)
        return try make(factory, name: name, context: checked)
    }

    private func make(_ factory: Factory, name: String, context: ProviderFactoryContext) throws(ConfigurationError) -> any AuthorizationProvider {
        do {
            return try factory(context)
        } catch let error as ConfigurationError {
            throw error
        } catch {
            throw .providerCreationFailed(name: name, reason: String(describing: error))
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

extension ConfigurationError.Code {
    /// A name was registered twice with one `ProviderRegistry`, or a mode was refused at
    /// registration (``ProviderRegistry/checkRegistrations()``), or owns a key of the configuration's
    /// schema (``ProviderRegistry/checkModes(reserving:as:)``); the registry refuses every
    /// configuration until the registration is fixed.
    public static let invalidRegistration = Self(rawValue: "invalidRegistration")
}

extension ConfigurationError {
    /// The name `name` was registered twice with one `ProviderRegistry`: the first registration is
    /// kept, never replaced without a word, and the registry refuses every configuration until one
    /// of the two is removed.
    static func nameRegisteredTwice(_ name: String, first: String, second: String) -> ConfigurationError {
        ConfigurationError(.invalidRegistration,
             "The provider registry refuses to start: \(LogText.typeName(name)) is registered twice (\(first), then \(second)); unregister the first to replace it, or register the second under another name.",
             name: name)
    }

    /// The mode registered as `name` is refused, for `reason` (a key it cannot declare, or a key of
    /// the configuration's schema); the registry refuses every configuration until the
    /// registration is fixed.
    static func modeRefused(_ name: String, reason: String) -> ConfigurationError {
        ConfigurationError(.invalidRegistration, "The provider registry refuses to start: the mode \(LogText.typeName(name)) cannot be registered: \(reason).", name: name)
    }
}
