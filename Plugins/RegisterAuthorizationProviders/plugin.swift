import Foundation
import PackagePlugin

/// Registers the providers a target names in its `sdkauth-providers.json` at build time.
///
/// For each target that applies it, runs `sdkauth-register-providers` on the manifest in the
/// target's directory; the generated `ProviderRegistry.registerManifestProviders()` registers every
/// entry, and a misspelt or non-conforming type is a compile error at the manifest's line.
@main
struct RegisterAuthorizationProviders: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) async throws -> [Command] {
        guard let target = target as? SourceModuleTarget else {
            Diagnostics.error("RegisterAuthorizationProviders applies to source targets only; \(target.name) is not one")
            return []
        }
        // The manifest is one of the target's files that no build rule handles; SwiftPM hands those
        // to the target's plugins (and does not warn about them). A target that applies the plugin
        // without one is a mistake in the package, like a missing OpenAPI generator configuration: it
        // fails the package's build, as an error in Package.swift would.
        let manifests = target.sourceFiles.map(\.url).filter { $0.lastPathComponent == "sdkauth-providers.json" }
        guard manifests.count <= 1 else {
            Diagnostics.error("target \(target.name) has more than one sdkauth-providers.json: \(manifests.map(\.path).sorted().joined(separator: ", ")); keep the one in the target's directory")
            return []
        }
        guard let manifest = manifests.first else {
            Diagnostics.error("target \(target.name) applies RegisterAuthorizationProviders but has no sdkauth-providers.json in its directory (or excludes it); add one ({\"providers\": []} registers none)")
            return []
        }
        let output = context.pluginWorkDirectoryURL.appendingPathComponent("RegisteredAuthorizationProviders.swift")
        return [
            .buildCommand(
                displayName: "Registering authorization providers of \(target.name) from sdkauth-providers.json",
                executable: try context.tool(named: "sdkauth-register-providers").url,
                arguments: ["--manifest", manifest.path, "--output", output.path, "--module-name", target.moduleName],
                inputFiles: [manifest],
                outputFiles: [output]
            ),
        ]
    }
}
