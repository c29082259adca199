import Foundation
import ProviderRegistrationGenerator
import SDKAuthorization
import SDKAuthorizationModeKit
import SDKAuthorizationEngagement
import SDKAuthorizationIDToken
import SDKAuthorizationSignature
import SDKAuthorizationTokenExchange

/// Checks one configuration file as the framework reads it and as a client made from it starts.
///
/// Two passes, each with the framework's own code, so each message is the one the framework logs:
/// 1. `AuthorizationConfiguration(contentsOf:)`: syntax, keys, types and values;
/// 2. `AuthorizedHTTPClient(configuration:registry:...)` with the default Engagement policy: the
///    project `authorization` is present, and with advanced auth on, the provider is named and
///    found. The registry holds the built-in modes the app links (all of them when the doctor is not
///    told which: see ``Target/linkedProducts``) and every provider the target's `ProviderManifest`
///    declares; nothing is sent.
///
/// A mode is known from its description, the same for every mode: the built-in ones
/// (`BuiltInProviderName.modes`) and those written outside the framework (`sdkauth-mode.json`,
/// `ModeDescription`, passed with `--mode-description`). A described mode whose product the app
/// links is in the registry: its keys are checked as the app's registry checks them, but not their
/// values (an outside mode's validation is code the doctor cannot load). A described mode whose
/// product the app does not link (`--linked-products`) is only described, as the app's registry
/// knows it: a name of it, or close to it, is an error with the hint the app's registry adds
/// (`ProviderRegistry.hint(forUnresolvedName:otherNames:otherModes:modeSettings:)`).
///
/// Without a manifest the doctor cannot see providers the app registers in code, so another
/// provider that is not found is a warning (with the message the client will log if it is indeed
/// missing); with a manifest it is an error, unless it is a module-qualified type name the app's
/// run-time lookup may find: declared in the target's sources, or in another module.
package enum ConfigurationCheck {
    /// What the doctor knows of the target a configuration file belongs to.
    struct Target {
        /// Its provider manifest, if it has one.
        var manifest: ProviderManifest?
        /// Where the manifest is: its folder is the target's, and its name the module's.
        var manifestURL: URL?
        /// The products the app links (`--linked-products`), or nil when the doctor was not told.
        var linkedProducts: Set<String>?
        /// The modes written outside the framework that the doctor was told of (`--mode-description`).
        var describedModes: [DescribedMode]

        init(manifest: ProviderManifest? = nil, manifestURL: URL? = nil, linkedProducts: Set<String>? = nil, describedModes: [DescribedMode] = []) {
            self.manifest = manifest
            self.manifestURL = manifestURL
            self.linkedProducts = linkedProducts
            self.describedModes = describedModes
        }

        /// The module the manifest's folder is the target of.
        var module: String? { manifestURL?.deletingLastPathComponent().lastPathComponent }
    }

    /// A mode known from its description, and the description's path as shown.
    struct DescribedMode: Sendable {
        let description: ModeDescription
        let shownAs: String
    }

    /// The findings for the file at `url`, shown as `displayPath`, in `target`.
    static func check(_ url: URL, displayPath: String, target: Target) -> [Finding] {
        let configuration: AuthorizationConfiguration
        do {
            configuration = try read(url, target: target)
        } catch {
            var findings = [Finding(.error, file: displayPath, key: key(of: error), error.message)]
            // The app's registry may hold the mode that the doctor's lacks: say how to show it the mode.
            if error.code == .modeNotRegistered, let name = error.name {
                findings.append(Finding(.note, file: displayPath,
                                        "the doctor has no description of \(LogText.typeName(name)) either: if the app registers the mode, pass its \(ModeDescription.fileName) (NamedProviderFactory.modeDescription(product:)) with --mode-description to have its keys checked"))
            }
            return findings
        }
        var findings: [Finding] = []
        var firstError = startUpError(configuration, target: target)
        // The client checks the project authorization before the provider and stops at the first
        // refusal; look past a missing authorization so both are reported in one run.
        if let error = firstError, error.code == .missingKey, error.key == "authorization" {
            findings.append(Finding(.error, file: displayPath, key: "authorization", error.message))
            firstError = (try? withPlaceholderAuthorization(configuration)).flatMap { startUpError($0, target: target) }
        }
        if let error = firstError {
            findings.append(finding(for: error, configuration: configuration, file: displayPath, target: target))
        }
        // A mode the manifest registers that the doctor cannot see (no description): never "ok", for
        // the app may refuse the file at start for a key the doctor cannot know of.
        if findings.isEmpty, let unseen = unseenMode(configuration, target: target) {
            findings.append(Finding(.warning, file: displayPath, key: "providerName", unseen))
        }
        if findings.isEmpty {
            findings.append(Finding(.note, file: displayPath, "ok: \(summary(configuration))"))
        }
        // A vendor's switch that leaves a mode off (Braze's EnableSDKAuthentication).
        for note in configuration.notes {
            findings.append(Finding(.note, file: displayPath, note))
        }
        // A described mode: what the doctor could not check.
        if configuration.advancedAuthEnabled, let name = lookedUpName(configuration),
           let described = target.describedModes.first(where: { $0.description.providerName == name }), links(described.description, target) {
            findings.append(Finding(.note, file: displayPath,
                                    "\(LogText.typeName(name)) is the mode of the product \(LogText.readable(described.description.product, limit: 128)), known from its description \(LogText.readable(described.shownAs, limit: 512)): its keys' names and types, required keys, defaults and vendor spellings are checked; the app checks the values with the mode's own validation"))
        }
        // A built-in name resolves in the doctor, which links every mode; say what the app needs.
        if target.linkedProducts == nil, configuration.advancedAuthEnabled, let name = lookedUpName(configuration),
           target.manifest?.declares(name) != true, let product = builtInMode(name)?.product {
            findings.append(Finding(.note, file: displayPath,
                                    "\(LogText.typeName(name)) resolves only in an app that links \(product); the doctor was not told which products the app links (the authorization-doctor plugin tells it; sdkauth-config takes --linked-products), so it assumed \(product) is linked"))
        }
        return findings
    }

    /// The file at `url` read as the app's registry reads it, as far as the doctor knows that
    /// registry: a name the manifest registers is there, so a file choosing it never hears that it
    /// is not registered (its keys, unknown to the doctor without a description, are refused as
    /// the app refuses keys a provider does not own).
    static func read(_ url: URL, target: Target) throws(ConfigurationError) -> AuthorizationConfiguration {
        do {
            return try AuthorizationConfiguration(contentsOf: url, registry: registry(for: target))
        } catch where error.code == .modeNotRegistered {
            guard let name = error.name, target.manifest?.declares(name) == true else { throw error }
            let registry = registry(for: target)
            registry.register(name: name) { _ in DeclaredProvider() }
            return try AuthorizationConfiguration(contentsOf: url, registry: registry)
        }
    }

    /// What the doctor cannot check of the mode `configuration` chooses, when the manifest registers
    /// it (mode `factory`) and no description (`--mode-description`) of that name tells its keys:
    /// the app's own mode, or a described mode the manifest registers under another name.
    static func unseenMode(_ configuration: AuthorizationConfiguration, target: Target) -> String? {
        guard configuration.advancedAuthEnabled, let name = lookedUpName(configuration),
              let entry = target.manifest?.entries.first(where: { $0.name == name }), entry.mode == .factory,
              builtInMode(name) == nil,
              !target.describedModes.contains(where: { $0.description.providerName == name }) else { return nil }
        let typeModule = entry.type.split(separator: ".").first.map(String.init) ?? ""
        var text = "\(LogText.typeName(name)) is the mode \(LogText.typeName(entry.type)) that \(ProviderManifest.fileName) registers, and the doctor has no description of it (\(ModeDescription.fileName) under that name) and cannot load its code: its keys are not checked here (a required key missing, a wrong type or a value the mode refuses fails at start, not here)"
        if let described = target.describedModes.first(where: { described in
            described.description.product == typeModule || described.description.providerName.split(separator: ".").first.map(String.init) == typeModule
        }) {
            text += "; the description \(LogText.readable(described.shownAs, limit: 512)) names its mode \(LogText.typeName(described.description.providerName)): if that is this mode, register it under that name"
        } else {
            text += "; describe the mode (NamedProviderFactory.modeDescription(product:), passed with --mode-description) to have them checked"
        }
        return text
    }

    /// The name the registry looks up for `configuration`, if any.
    static func lookedUpName(_ configuration: AuthorizationConfiguration) -> String? {
        switch configuration.providerLookup {
        case .implicitName(let name): name
        case .registeredClassName(let name): name
        }
    }

    /// The error a client made from `configuration` in `target` would refuse to start with, if any.
    static func startUpError(_ configuration: AuthorizationConfiguration, target: Target) -> ConfigurationError? {
        let registry = registry(for: target)
        // A described mode whose product the app does not link is not found there: what its registry throws.
        if let name = lookedUpName(configuration), let mode = knownModes(target).first(where: { $0.providerName == name }), !links(mode, target) {
            let error = notFound(configuration.providerLookup, target: target)
            registry.register(name: name) { _ in throw error }
        }
        for entry in target.manifest?.entries ?? [] {
            // A built-in mode the manifest registers by type is the real mode, registered above with its keys.
            if let mode = builtInMode(entry.name), links(mode, target) { continue }
            // So is a described mode the manifest registers (mode `factory`), with the keys of its description.
            if target.describedModes.contains(where: { $0.description.providerName == entry.name }) { continue }
            // A name registered above (a built-in mode whose product is not linked) is not registered
            // twice here: the registry would refuse the second, which the app never does.
            if registry.isRegistered(entry.name) { continue }
            if case .implicitName(let name) = configuration.providerLookup, name == entry.name, entry.mode == .customerToken,
               isCertainlyNotNSObject(entry.type, in: target) {
                // The iOS convention wants an NSObject subclass; the app's registry refuses this one at start.
                registry.register(name: entry.name) { _ in throw ConfigurationError.providerIsNotNSObject(name: name) }
            } else {
                registry.register(name: entry.name) { _ in DeclaredProvider() }
            }
        }
        do {
            _ = try AuthorizedHTTPClient(configuration: configuration, registry: registry, transport: NoTransport(), diagnostics: SilentSink())
            return nil
        } catch where error.message == notFound(configuration.providerLookup, target: target).message {
            // The app's registry says "did you mean" among its names and the module-qualified names
            // of its classes: the manifest's customer-token classes are among them there.
            let known = (target.manifest?.entries ?? []).flatMap { $0.mode == .customerToken ? [$0.name, $0.type] : [$0.name] }
            // A described mode's hint (link the product, or the name it may mean) is there already.
            guard !known.isEmpty, let name = lookedUpName(configuration), describedHint(name, target: target) == nil else { return error }
            // The doctor's registry lacks the manifest's class types: the app's holds them.
            return registry.hint(forUnresolvedName: name, otherNames: known).map(error.appendingHint) ?? error
        } catch {
            return error
        }
    }

    /// A type the target's sources declare whose module-qualified name is close to `name` (a
    /// misspelt class name), when the target has a manifest and `name` is of its module.
    static func declaredTypeNearest(to name: String, in target: Target) -> String? {
        guard let module = target.module, let folder = target.manifestURL?.deletingLastPathComponent(),
              name.split(separator: ".").first.map(String.init) == module, let sources = ProviderSourceScan.swiftSources(in: folder) else {
            return nil
        }
        var nearest = NearestName(candidates: ProviderSourceScan.declaredTypeNames(in: sources).map { "\(module).\($0)" })
        return nearest.nearest(to: name)
    }

    /// A registry holding the built-in modes of the products the app links (all of them when the
    /// doctor was not told), as the app registers them; their collaborators are never called.
    static func builtInModes(linked: Set<String>?) -> ProviderRegistry {
        let registry = ProviderRegistry()
        func links(_ name: String) -> Bool { linked.map { $0.contains(builtInMode(name)?.product ?? "") } ?? true }
        if links(BuiltInProviderName.idTokenRefresh) { registry.register(IDTokenRefreshMode(refresh: nil)) }
        if links(BuiltInProviderName.signature) { registry.register(SignatureMode()) }
        if links(BuiltInProviderName.tokenExchange) {
            registry.register(TokenExchangeMode(signer: .async { _ in throw CancellationError() }))
        }
        return registry
    }

    /// The registry a client of `target` starts with, as far as the doctor knows it: the built-in
    /// modes the app links, and the described modes with their keys. No provider is ever asked for
    /// a credential.
    static func registry(for target: Target) -> ProviderRegistry {
        let registry = builtInModes(linked: target.linkedProducts)
        for mode in target.describedModes {
            if links(mode.description, target) {
                registry.register(name: mode.description.providerName, settingKeys: mode.description.settingKeys) { _ in DeclaredProvider() }
            } else {
                // The app does not link the mode's product: its registry cannot hold the mode.
                registry.describe(mode.description)
            }
        }
        return registry
    }

    /// The built-in mode named `name`, if it is one.
    static func builtInMode(_ name: String) -> ModeDescription? {
        BuiltInProviderName.modes.first { $0.providerName == name }
    }

    /// Every mode the doctor knows a description of: the built-in ones and those passed to it.
    static func knownModes(_ target: Target) -> [ModeDescription] {
        BuiltInProviderName.modes + target.describedModes.map(\.description)
    }

    /// Whether the app links the product of `mode` (taken as linked when the doctor was not told).
    static func links(_ mode: ModeDescription, _ target: Target) -> Bool {
        target.linkedProducts?.contains(mode.product) ?? true
    }

    /// The hint the app's registry gives for `name` from the modes it knows of without holding
    /// them (a described mode's name, or one close to it), or nil.
    static func describedHint(_ name: String, target: Target) -> String? {
        let unlinked = target.describedModes.map(\.description).filter { !links($0, target) }
        return ProviderRegistry().hint(forUnresolvedName: name, otherModes: unlinked + BuiltInProviderName.modes)
    }

    /// What the app's registry throws for a name it does not find, with its hint.
    static func notFound(_ lookup: ProviderLookup, target: Target) -> ConfigurationError {
        switch lookup {
        case .implicitName(let name):
            return describedHint(name, target: target).map(ConfigurationError.advancedAuthEnabledWithoutProvider.appendingHint)
                ?? .advancedAuthEnabledWithoutProvider
        case .registeredClassName(let name):
            let error = ConfigurationError.registeredClassNotFound(name: name ?? "")
            return describedHint(name ?? "", target: target).map(error.appendingHint) ?? error
        }
    }

    /// Whether the target's sources show that `type` (of the manifest's module) is a class that is
    /// not an `NSObject` subclass.
    static func isCertainlyNotNSObject(_ type: String, in target: Target) -> Bool {
        guard let module = target.module, let folder = target.manifestURL?.deletingLastPathComponent(),
              type.split(separator: ".").first.map(String.init) == module, let sources = ProviderSourceScan.swiftSources(in: folder) else {
            return false
        }
        return ProviderSourceScan.isCertainlyNotNSObject(ProviderSourceScan.lastName(type), in: sources)
    }

    /// A provider-lookup failure the doctor cannot be sure of is a warning: without a manifest, a
    /// provider registered in code; with one, a type name the app's run-time lookup may find.
    static func finding(for error: ConfigurationError, configuration: AuthorizationConfiguration, file: String, target: Target) -> Finding {
        let notFound: Set<ConfigurationError.Code> = [.advancedAuthEnabledWithoutProvider, .registeredClassNotFound]
        let name = lookedUpName(configuration) ?? ""
        // A built-in name (unlinked) or one close to it: the app fails for certain.
        guard notFound.contains(error.code), describedHint(name, target: target) == nil else {
            return Finding(.error, file: file, key: key(of: error), error.message)
        }
        // What the doctor cannot see, it says it cannot see: never "has not been found" for a
        // provider the app may well have.
        let what = switch configuration.providerLookup {
        case .implicitName: "a provider registered as \(LogText.typeName(name))"
        case .registeredClassName: "the class \(LogText.typeName(name))"
        }
        let ifMissing = "if the app has none, it fails at start with \"\(error.message)\"; declare it in \(ProviderManifest.fileName) to have it checked"
        guard target.manifest != nil else {
            return Finding(.warning, file: file, key: key(of: error),
                           "The doctor cannot see \(what): without \(ProviderManifest.fileName) it cannot see the providers the app registers in code or the classes its run-time lookup finds; \(ifMissing)")
        }
        guard ProviderManifest.isTypeName(name), let typeModule = name.split(separator: ".").first.map(String.init) else {
            return Finding(.error, file: file, key: key(of: error), error.message)
        }
        if typeModule != target.module {
            return Finding(.warning, file: file, key: key(of: error),
                           "The doctor cannot see \(what): it is in the module \(typeModule), whose types the doctor cannot load, and the app's run-time lookup finds it there when the app links \(typeModule); \(ifMissing)")
        }
        guard let folder = target.manifestURL?.deletingLastPathComponent(), let sources = ProviderSourceScan.swiftSources(in: folder),
              ProviderSourceScan.inheritanceClauses(of: ProviderSourceScan.lastName(name), in: sources).declarations > 0 else {
            // The app's own message; a class of the target's sources close to the name is suggested
            // as the app's registry suggests a registered one.
            guard !error.message.contains("did you mean"), let meant = declaredTypeNearest(to: name, in: target) else {
                return Finding(.error, file: file, key: key(of: error), error.message)
            }
            return Finding(.error, file: file, key: key(of: error),
                           "\(error.message) (\(LogText.doubleQuoted(name, limit: 80)) is not declared in the sources of \(typeModule); did you mean \(LogText.doubleQuoted(meant, limit: 80))?)")
        }
        return Finding(.warning, file: file, key: key(of: error),
                       "\(LogText.typeName(name)) is not in \(ProviderManifest.fileName), but the sources of \(typeModule) declare it, so the app's run-time lookup finds it; declare it in the manifest to have it checked at build time")
    }

    private static func withPlaceholderAuthorization(_ configuration: AuthorizationConfiguration) throws(ConfigurationError) -> AuthorizationConfiguration {
        try AuthorizationConfiguration(
            projectToken: configuration.projectToken, baseURL: configuration.baseURL.absoluteString, authorization: "Token doctor-placeholder",
            advancedAuthEnabled: configuration.advancedAuthEnabled, providerLookup: configuration.providerLookup,
            customerTokenCaching: configuration.customerTokenCaching, modeSettings: configuration.modeSettings)
    }

    /// The file key an error is about.
    static func key(of error: ConfigurationError) -> String? {
        // The mode is not registered: its keys are fine, the name is what to act on.
        if error.code == .modeNotRegistered { return "providerName" }
        if let key = error.key { return key }
        if let keys = error.keys { return keys.joined(separator: ", ") }
        switch error.code {
        case .emptyProjectToken: return "projectToken"
        case .invalidBaseURL: return "baseURL"
        case .basicAuthenticationNotSupported: return "authorization"
        case .emptyCredential, .credentialContainsControlCharacters: return error.field == "projectToken" ? "projectToken" : "authorization"
        case .advancedAuthEnabledWithoutProvider, .providerIsNotNSObject, .providerDoesNotConform, .advancedAuthEnabledButProviderNotNamed,
             .registeredClassNotFound, .registeredClassDoesNotImplement, .providerCreationFailed:
            return "providerName"
        case .customerTokenEndpointsWithoutAdvancedAuth, .providerWithoutAdvancedAuth: return "advancedAuthEnabled"
        default: return nil
        }
    }

    /// What a good file configures; the credential is never shown.
    static func summary(_ configuration: AuthorizationConfiguration) -> String {
        let authorization = configuration.authorization.map(String.init(describing:)) ?? "no project authorization"
        guard configuration.advancedAuthEnabled else {
            return "project \(LogText.escaped(configuration.projectToken, limit: 64)) at \(configuration.baseURL.absoluteString), \(authorization), advanced auth off"
        }
        let lookup = switch configuration.providerLookup {
        case .implicitName(let name): "provider name \(LogText.typeName(name))"
        case .registeredClassName(let name): "registered class \(LogText.typeName(name ?? ""))"
        }
        return "project \(LogText.escaped(configuration.projectToken, limit: 64)) at \(configuration.baseURL.absoluteString), \(authorization), advanced auth on, \(lookup)"
    }
}

/// Stands in for a provider the manifest declares or a described mode makes: the doctor only needs
/// the name to resolve.
private struct DeclaredProvider: AuthorizationProvider {
    func credential(for context: AuthorizationContext) async throws -> Credential {
        throw CancellationError()
    }
}

/// The doctor sends nothing.
private struct NoTransport: HTTPTransport {
    func send(_ request: OutgoingRequest) async throws -> ServerResponse { throw CancellationError() }
}

/// The thrown error carries the message the client logs; the doctor prints that.
private struct SilentSink: DiagnosticsSink {
    func record(_ diagnostic: Diagnostic) {}
}
