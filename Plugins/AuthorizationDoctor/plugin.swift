import Foundation
import PackagePlugin

/// `swift package authorization-doctor [FILE ...] [--jwt TOKEN]` runs the authorization doctor
/// (`sdkauth-config`) on the package: with no file, every configuration file in it, knowing the
/// modes of other packages that describe themselves (`sdkauth-mode.json`).
///
/// This one file is both command plugins: `Plugins/ValidateAuthorizationConfiguration/plugin.swift`,
/// the `validate-authorization-config` alias, is a symbolic link to it (git stores it as one; SwiftPM
/// rejects two plugin targets sharing a source through `path:` or `sources:`, "overlapping sources",
/// and a plugin cannot depend on a library). Scripts/check-doctor runs both verbs.
@main
struct AuthorizationDoctor: CommandPlugin {
    func performCommand(context: PluginContext, arguments: [String]) async throws {
        let tool = try context.tool(named: "sdkauth-config")
        let process = Process()
        process.executableURL = tool.url
        // The tool reads relative paths, and looks for files, from the package directory. It is
        // told which modules each source target links (directly or through other targets), and all
        // of them together for files outside every target (test targets left out), so a mode whose
        // product is not linked (a built-in one, or one described by its sdkauth-mode.json, whose
        // product is its module) is an error, as in the app.
        var linked: Set<String> = []
        var perTarget: [String] = []
        // A mode written outside the framework describes itself in an sdkauth-mode.json in its
        // target's folder: each one found in a target or the targets it depends on (in this package
        // or a dependency package) is passed once, so a configuration choosing the mode is checked.
        var descriptions: [String] = []
        for case let target as SourceModuleTarget in context.package.targets where target.kind != .test {
            let names = Set(target.recursiveTargetDependencies.map(\.name))
            linked.formUnion(names)
            // The directory as a string: directoryURL needs tools 6.1, and Path's own accessors are deprecated.
            perTarget += ["--target-products", "\(String(describing: target.directory))=\(names.sorted().joined(separator: ","))"]
            for folder in [target.directory] + target.recursiveTargetDependencies.map(\.directory) {
                let description = URL(fileURLWithPath: String(describing: folder)).appendingPathComponent("sdkauth-mode.json").path
                if FileManager.default.fileExists(atPath: description), !descriptions.contains(description) {
                    descriptions.append(description)
                }
            }
        }
        process.arguments = ["--package-directory", context.package.directoryURL.path,
                             "--linked-products", linked.sorted().joined(separator: ",")] + perTarget
            + descriptions.flatMap { ["--mode-description", $0] } + arguments
        try process.run()
        process.waitUntilExit()
        if process.terminationStatus != 0 {
            throw DoctorFailed(status: process.terminationStatus)
        }
    }
}

/// The doctor found errors (status 1) or was called wrongly (status 64); its own output says which.
struct DoctorFailed: Error, CustomStringConvertible {
    let status: Int32
    var description: String {
        status == 64 ? "the authorization doctor was called wrongly (see its usage message)" : "the authorization doctor found errors (see its output)"
    }
}
